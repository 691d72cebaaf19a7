"""Checkpoint stall: how long training stops for one checkpoint of a state
of a given size, written in the background by ringtrial (writing, SHA-256,
fsync and the rename happen on another thread) with two snapshots:
ringtrial_torch's (every tensor cloned: one copy) and torch.save into
memory (pickling copies more). Against the peer, a synchronous torch.save +
fsync of the same state, and the limits: copying the state in memory (any
snapshot must) and the disk's fsync'd write bandwidth (dd). Also the time
to restore (verify every file, then load) against reading the files.

Then the copy-on-write snapshot (ringtrial_torch.save_forked: a fork()ed
writer process writes the state from its view of memory, nothing is
copied): the stall (until it returns), what the copy costs where it went
(the next in-place update of the whole state, which makes the kernel copy
every page the writer still shares, against the same update without a
writer), and its background write against the disk.

    PYTHONPATH=build/python /usr/bin/python3 bench/checkpoint_bench.py --sizes-mib 64,512,2048 --runs 3
Prints two markdown tables, one row per size."""
import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import ringtrial
import ringtrial_torch


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def state_of(mib):
    torch.manual_seed(0)
    return {"weights": torch.randn(mib * (1 << 20) // 4), "step": torch.tensor([7])}


def sync_save(state, directory):
    path = os.path.join(directory, "sync.pt")
    with open(path, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.remove(path)


def dd_seconds(directory, mib):
    path = os.path.join(directory, "dd.bin")
    t, _ = timed(lambda: subprocess.run(
        ["dd", "if=/dev/zero", f"of={path}", "bs=16M", f"count={max(1, mib // 16)}", "conv=fsync"],
        check=True, capture_output=True))
    os.remove(path)
    return t


def read_seconds(path):
    def read_all():
        total = 0
        for root, _, files in os.walk(path):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    while chunk := f.read(16 << 20):
                        total += len(chunk)
        return total
    os.system("sync")
    return timed(read_all)[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes-mib", default="64,512,2048")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where checkpoints are written (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as work:
        ctx = ringtrial.Context.from_environment(["bench", "--checkpoint-dir", os.path.join(work, "ck")], {})
        copied_rows, forked_rows = [], []
        load_before = os.getloadavg()[0]
        for mib in [int(s) for s in args.sizes_mib.split(",")]:
            state = state_of(mib)
            copy, sync, stall, pickled, background, disk, restore, read = [], [], [], [], [], [], [], []
            forked, update, update_after, forked_background, update_quiet, forked_idle = [], [], [], [], [], []
            uuid = None
            for _ in range(args.runs):
                # The copy-on-write snapshot, and the in-place update training
                # makes next (every page of the state written once).
                update.append(timed(lambda: state["weights"].add_(1.0))[0])
                forked.append(timed(lambda: ringtrial_torch.save_forked(ctx, 1, state))[0])
                t0 = time.perf_counter()
                update_after.append(timed(lambda: state["weights"].add_(1.0))[0])
                ctx.checkpoints.wait()
                forked_background.append(time.perf_counter() - t0)
                # The same when training writes the state only once the writer is done.
                ringtrial_torch.save_forked(ctx, 1, state)
                forked_idle.append(timed(ctx.checkpoints.wait)[0])
                update_quiet.append(timed(lambda: state["weights"].add_(1.0))[0])

                copy.append(timed(lambda: {k: v.clone() for k, v in state.items()})[0])
                sync.append(timed(lambda: sync_save(state, work))[0])

                def pickle_snapshot():
                    buffer = io.BytesIO()
                    torch.save(state, buffer)
                    ctx.checkpoints.save_async(1, {"state.pt": buffer.getbuffer()})
                    return buffer
                t, buffer = timed(pickle_snapshot)
                pickled.append(t)
                ctx.checkpoints.wait()
                del buffer
                stall.append(timed(lambda: ringtrial_torch.save_async(ctx, 1, state))[0])
                t, uuid = timed(ctx.checkpoints.wait)
                background.append(t)
                disk.append(dd_seconds(work, mib))
                path = os.path.join(work, "ck", uuid)
                resumed = ringtrial.Context.from_environment(
                    ["bench", "--checkpoint-dir", os.path.join(work, "ck"), "--resume", path], {})

                def restore_it():
                    info = resumed.checkpoints.latest_verified()
                    return ringtrial_torch.load(info.path)
                restore.append(timed(restore_it)[0])
                read.append(read_seconds(path))
                del resumed
                for name in os.listdir(os.path.join(work, "ck")):
                    subprocess.run(["rm", "-rf", os.path.join(work, "ck", name)], check=True)
            m = {k: statistics.median(v) for k, v in
                 dict(copy=copy, sync=sync, stall=stall, pickled=pickled, background=background, disk=disk,
                      restore=restore, read=read, forked=forked, update=update, update_after=update_after,
                      forked_background=forked_background, update_quiet=update_quiet,
                      forked_idle=forked_idle).items()}
            ms = lambda s: f"{s * 1000:.0f} ms"
            copied_rows.append(
                f"| {mib} MiB | {ms(m['copy'])} | {ms(m['sync'])} | {ms(m['stall'])} | "
                f"{m['stall'] / m['copy']:.2f}× | {m['stall'] / m['sync']:.2f}× | {ms(m['pickled'])} | "
                f"{m['pickled'] / m['copy']:.2f}× | {ms(m['background'])} | {ms(m['disk'])} | "
                f"{m['background'] / m['disk']:.2f}× | {ms(m['restore'])} | {ms(m['read'])} | "
                f"{m['restore'] / m['read']:.2f}× |")
            deferred = m["update_after"] - m["update"]
            forked_rows.append(
                f"| {mib} MiB | {ms(m['copy'])} | {ms(m['sync'])} | {ms(m['forked'])} | "
                f"{m['forked'] / m['copy']:.2f}× | {m['forked'] / m['sync']:.3f}× | {ms(m['update'])} | "
                f"{ms(m['update_after'])} | {ms(deferred)} | {(m['forked'] + deferred) / m['copy']:.2f}× | "
                f"{ms(m['update_quiet'])} | {ms(m['forked_background'])} | {ms(m['forked_idle'])} | "
                f"{ms(m['disk'])} | {m['forked_idle'] / m['disk']:.2f}× |")
            print(f"{mib} MiB done", file=sys.stderr, flush=True)
            del state
        print("| state | copy in memory (limit) | sync torch.save + fsync (peer) | stall, ringtrial_torch | "
              "/ copy | / sync | stall, torch.save to memory | / copy | background write | disk (dd, fsync) | "
              "write / disk | restore | read files | restore / read |")
        print("|" + " --- |" * 14)
        print("\n".join(copied_rows))
        print()
        print("| state | copy in memory (limit) | sync torch.save + fsync (peer) | stall, save_forked | / copy | "
              "/ sync | in-place update | the same, writer running | copy-on-write cost | "
              "(stall + cost) / copy | update, writer done | background write, updating | "
              "background write, idle | disk (dd, fsync) | idle write / disk |")
        print("|" + " --- |" * 15)
        print("\n".join(forked_rows))
        print(f"\n1-minute load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
