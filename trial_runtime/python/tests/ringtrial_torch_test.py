"""ringtrial_torch: a PyTorch state checkpointed in the background comes
back bit for bit (every dtype, shapes, empty tensors, nested structure and
plain values), holds the state of the moment save_async was called while
training changes it, and verifies on resume like any checkpoint. The same
for save_forked (a copy-on-write writer process: the same files, byte for
byte, as save_async), and for a state split across two rank processes
(ShardedCheckpoints), each restoring its own part."""
import copy
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import torch

import ringtrial
import ringtrial_torch


class RingtrialTorchTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.checkpoints = os.path.join(self.dir.name, "checkpoints")

    def tearDown(self):
        self.dir.cleanup()

    def context(self, *args):
        return ringtrial.Context.from_environment(["train.py", "--checkpoint-dir", self.checkpoints, *args], {})

    def state(self):
        torch.manual_seed(3)
        model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        model(torch.randn(5, 8)).sum().backward()
        opt.step()
        return {
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "bf16": torch.randn(7, 3).to(torch.bfloat16),
            "ints": torch.arange(-5, 5, dtype=torch.int64).reshape(2, 5),
            "flags": torch.tensor([True, False, True]),
            "empty": torch.empty(0, 3),
            "strided": torch.randn(4, 6).t(),
            "epoch": 3,
            "pair": (torch.tensor(2.5), "label"),
        }

    def assertSameState(self, a, b):
        if isinstance(a, torch.Tensor):
            self.assertIsInstance(b, torch.Tensor)
            self.assertEqual((a.dtype, tuple(a.shape)), (b.dtype, tuple(b.shape)))
            self.assertTrue(torch.equal(a, b))
        elif isinstance(a, dict):
            self.assertEqual(list(a.keys()), list(b.keys()))
            for k in a:
                self.assertSameState(a[k], b[k])
        elif isinstance(a, (list, tuple)):
            self.assertEqual((type(a), len(a)), (type(b), len(b)))
            for x, y in zip(a, b):
                self.assertSameState(x, y)
        else:
            self.assertEqual(a, b)

    def test_the_state_comes_back_bit_for_bit_as_it_was_at_the_call(self):
        ctx = self.context()
        state = self.state()
        expected = copy.deepcopy(state)
        ringtrial_torch.save_async(ctx, 40, state, {"epoch": 3})
        for t in state["model"].values():  # training goes on at once
            t.add_(1.0)
        state["ints"].zero_()
        uuid = ctx.checkpoints.wait()
        path = os.path.join(self.checkpoints, uuid)
        info = self.context("--resume", path).checkpoints.latest_verified()
        self.assertEqual((info.batches, info.metadata["epoch"]), (40, 3))
        loaded = ringtrial_torch.load(info.path)
        self.assertSameState(expected, loaded)
        # As torch.save and torch.load would give it back.
        with tempfile.TemporaryFile() as f:
            torch.save(expected, f)
            f.seek(0)
            self.assertSameState(torch.load(f), loaded)

    def test_a_resumed_model_trains_on_identically(self):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        data = torch.randn(16, 4)

        def step(m, o):
            o.zero_grad()
            m(data).pow(2).mean().backward()
            o.step()

        step(model, opt)
        ctx = self.context()
        ringtrial_torch.save_async(ctx, 1, {"model": model.state_dict(), "optimizer": opt.state_dict()})
        uuid = ctx.checkpoints.wait()
        state = ringtrial_torch.load(os.path.join(self.checkpoints, uuid))
        resumed = torch.nn.Linear(4, 1)
        resumed_opt = torch.optim.SGD(resumed.parameters(), lr=0.1, momentum=0.9)
        resumed.load_state_dict(state["model"])
        resumed_opt.load_state_dict(state["optimizer"])
        for _ in range(3):
            step(model, opt)
            step(resumed, resumed_opt)
        self.assertTrue(torch.equal(model.weight, resumed.weight))
        self.assertTrue(torch.equal(model.bias, resumed.bias))

    def test_a_forked_writer_writes_the_same_files_as_save_async(self):
        ctx = self.context()
        state = self.state()
        expected = copy.deepcopy(state)
        ringtrial_torch.save_forked(ctx, 40, state, {"epoch": 3})
        for t in state["model"].values():  # training goes on at once, in place
            t.add_(1.0)
        state["ints"].zero_()
        forked = ctx.checkpoints.wait()
        ringtrial_torch.save_async(ctx, 40, expected, {"epoch": 3})
        copied = ctx.checkpoints.wait()

        def manifest(uuid):
            with open(os.path.join(self.checkpoints, uuid, ".ring-checkpoint.json"), "rb") as f:
                return f.read()
        self.assertEqual(manifest(forked), manifest(copied))
        info = self.context("--resume", os.path.join(self.checkpoints, forked)).checkpoints.latest_verified()
        self.assertSameState(expected, ringtrial_torch.load(info.path))

    def test_two_ranks_write_and_restore_their_parts_of_one_checkpoint(self):
        store = os.path.join(self.dir.name, "store")
        rank_script = textwrap.dedent("""
            import os, sys, torch, ringtrial, ringtrial_torch
            checkpoints, store, resume = sys.argv[1], sys.argv[2], sys.argv[3]
            args = ["train.py", "--checkpoint-dir", checkpoints] + (["--resume", resume] if resume else [])
            ctx = ringtrial.Context.from_environment(args, dict(os.environ))
            sharded = ringtrial.ShardedCheckpoints(ctx, timeout_s=60, store=ringtrial.file_store(store))
            part = {"rows": torch.arange(4, dtype=torch.float32) + 10 * sharded.rank, "rank": sharded.rank}
            if resume:
                mine = sharded.latest_verified()
                state = ringtrial_torch.load(mine.path)
                assert torch.equal(state["rows"], part["rows"]) and state["rank"] == sharded.rank, state
                print("restored", mine.uuid)
            else:
                ringtrial_torch.save_sharded_async(sharded, 8, part, {"epoch": 1})
                print("saved", sharded.wait())
        """)

        def run_ranks(world, resume=""):
            procs = [subprocess.Popen(
                [sys.executable, "-B", "-c", rank_script, self.checkpoints, store + str(world) + resume[-4:],
                 resume],
                env=dict(os.environ, RANK=str(r), WORLD_SIZE=str(world)), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True) for r in range(world)]
            outs = [p.communicate(timeout=90) for p in procs]
            for p, (out, err) in zip(procs, outs):
                self.assertEqual(p.returncode, 0, out + err)
            return [out for out, _ in outs]

        saved = run_ranks(2)
        self.assertEqual(saved[0], saved[1])
        uuid = saved[0].split()[-1]
        path = os.path.join(self.checkpoints, uuid)
        self.assertEqual(sorted(os.listdir(path)), [".ring-checkpoint.json", "rank-0", "rank-1"])
        restored = run_ranks(2, path)
        self.assertEqual(restored, [f"restored {uuid}\n"] * 2)
        # One rank cannot take the parts of two.
        ctx = self.context("--resume", path)
        info = ctx.checkpoints.latest()
        self.assertEqual(ringtrial.shard_count(info), 2)
        with self.assertRaisesRegex(ringtrial.CheckpointError, "holds the parts of 2 ranks and this trial runs 1"):
            ringtrial.ShardedCheckpoints(ctx).latest_verified()
        self.assertEqual(ringtrial.shard_path(info, 1), os.path.join(path, "rank-1"))


if __name__ == "__main__":
    unittest.main()
