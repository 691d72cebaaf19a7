"""core_context.checkpoint over ringtrial's checkpoints (atomic, hashed,
registered with the master, verified before use).

store_path() hands the with-block the very directory ringtrial's save()
writes: save() runs on a helper thread whose writer waits until the block
ends, so the checkpoint is made durable and registered when the block exits,
and nothing is registered when the block raises. Keep ringtrial calls (metrics,
should_preempt) out of that block: the Context serves one thread at a time.

Sharded checkpoints (shard=True, every rank calls) have the trial runtime's
format (ringtrial.ShardedCheckpoints, docs/checkpoints.md): rank r writes its
files into `rank-<r>/` of the checkpoint's temporary directory in checkpoint
storage (a shared file system every agent mounts) and the checkpoint's
metadata says how many parts it has ("ring_shards"). Determined merges the
ranks' files into one directory; so do restore_path() (a view of links to
every part's files) and download(), and store_path() refuses two ranks
writing the same path, which no merged view could hold.

Checkpoints written before that format held every rank's files at their top
with `.determined-shards.json` naming each rank's; they are read as they are.
"""

import contextlib
import enum
import logging
import os
import pathlib
import shutil
import tempfile
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from determined import _env

logger = logging.getLogger("determined.core")

# The metadata key holding the number of parts (ring::trial::kShardsKey).
SHARDS_KEY = "ring_shards"
# The part of rank r: the folder ring::trial::ShardPath names.
PART_PREFIX = "rank-"
# The listing the earlier sharded layout kept at the checkpoint's top.
OLD_SHARDS_FILE = ".determined-shards.json"
# ringtrial's own record of a checkpoint, inside its directory.
MANIFEST = ".ring-checkpoint.json"


class DownloadMode(enum.Enum):
    LocalWorkersShareDownload = "LOCAL_WORKERS_SHARE_DOWNLOAD"
    NoSharedDownload = "NO_SHARED_DOWNLOAD"


def uuid_of(directory: str) -> str:
    """ringtrial writes checkpoint <uuid> into <root>/.tmp-<uuid> before moving it into place."""
    name = os.path.basename(directory.rstrip("/"))
    return name[len(".tmp-"):] if name.startswith(".tmp-") else name


def relative_files(root: str) -> List[str]:
    out = []
    for base, _, files in os.walk(root):
        for f in files:
            out.append(os.path.relpath(os.path.join(base, f), root))
    return sorted(out)


class _BlockFailed(Exception):
    """The with-block raised: the writer raises this so that ringtrial registers nothing."""


class _Save:
    """ringtrial's save() on a helper thread, its writer held open while the block runs."""

    def __init__(self, ctx, batches: int, metadata: Dict[str, Any]) -> None:
        self._ready = threading.Event()
        self._block_done = threading.Event()
        self._block_failed = False
        self._finish: Optional[Callable[[str], None]] = None
        self.directory: Optional[str] = None
        self.uuid: Optional[str] = None
        self.error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, args=(ctx, batches, metadata),
                                        name="determined-checkpoint", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self.error is not None:
            raise self.error

    def _run(self, ctx, batches, metadata) -> None:
        try:
            self.uuid = ctx.checkpoints.save(batches, self._writer, metadata)
        except _BlockFailed:
            pass
        except BaseException as e:  # reaches the caller
            self.error = e
        finally:
            self._ready.set()

    def _writer(self, directory: str) -> None:
        self.directory = directory
        self._ready.set()
        self._block_done.wait()
        if self._block_failed:
            raise _BlockFailed()
        if self._finish is not None:
            self._finish(directory)

    def end(self, failed: bool, finish: Optional[Callable[[str], None]] = None) -> Optional[str]:
        """Lets save() go on (or give up); returns the registered uuid."""
        self._block_failed = failed
        self._finish = finish
        self._block_done.set()
        self._thread.join()
        if self.error is not None and not failed:
            raise self.error
        return self.uuid


def part_name(rank: int) -> str:
    return f"{PART_PREFIX}{rank}"


def shard_count(metadata: Dict[str, Any]) -> int:
    """The number of parts of a sharded checkpoint; 0 when it is not sharded."""
    n = metadata.get(SHARDS_KEY)
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else 0


def check_merge(file_lists: List[List[str]]) -> None:
    """Raises ValueError unless the ranks' files merge into one directory:
    no path written twice, none a file on one rank and a folder on another."""
    owner: Dict[str, int] = {}
    for rank, files in enumerate(file_lists):
        for f in files:
            if f in owner:
                raise ValueError(f"ranks {owner[f]} and {rank} both wrote {f!r} into a sharded checkpoint")
            owner[f] = rank
    for f, rank in owner.items():
        parent = os.path.dirname(f)
        while parent:
            if parent in owner:
                raise ValueError(f"rank {owner[parent]} wrote the file {parent!r} and rank {rank} the folder "
                                 f"holding {f!r} into a sharded checkpoint")
            parent = os.path.dirname(parent)


def merged_files(directory: str, shards: int, registered: List[str]) -> Dict[str, str]:
    """Each registered file of a sharded checkpoint by its merged path:
    {"opt/1.pt": "<dir>/rank-1/opt/1.pt"}."""
    out: Dict[str, str] = {}
    parts = {f"{part_name(rank)}/": rank for rank in range(shards)}
    for path in registered:
        prefix = path.split("/", 1)[0] + "/"
        if prefix not in parts:
            continue  # not a part's file
        rel = path[len(prefix):]
        if rel in out:
            raise ValueError(f"two parts of the sharded checkpoint in {directory} hold {rel!r}")
        out[rel] = os.path.join(directory, path)
    return out


class CheckpointContext:
    def __init__(self, ctx, distributed, root: Optional[str], latest_uuid: Optional[str],
                 latest_path: Optional[str]) -> None:
        self._ctx = ctx
        self._dist = distributed
        self._root = root
        self._latest_uuid = latest_uuid
        self._latest_path = latest_path
        self.last_steps_completed = 0  # kept by the train context's reports

    def _batches(self, metadata: Dict[str, Any]) -> int:
        steps = metadata.get("steps_completed")
        if isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0:
            return steps
        return self.last_steps_completed

    @contextlib.contextmanager
    def store_path(self, metadata: Optional[Dict[str, Any]] = None, *,
                   shard: bool = False) -> Iterator[Tuple[pathlib.Path, str]]:
        """Yields (directory, uuid): write the checkpoint's files there; on exit
        it is made durable and registered. With shard=True every rank calls it."""
        metadata = dict(metadata or {})
        if SHARDS_KEY in metadata:
            raise ValueError(f"checkpoint metadata key {SHARDS_KEY!r} is kept for sharded checkpoints "
                             "(shard=True), which set it themselves")
        if shard and self._dist.size > 1:
            with self._store_sharded(metadata) as out:
                yield out
            return
        if self._dist.rank != 0:
            raise RuntimeError("only the chief stores a checkpoint; pass shard=True for every rank to "
                               "write part of one")
        save = _Save(self._ctx, self._batches(metadata), metadata)
        try:
            yield pathlib.Path(save.directory), uuid_of(save.directory)
        except BaseException:
            save.end(failed=True)
            raise
        save.end(failed=False)

    @contextlib.contextmanager
    def _store_sharded(self, metadata):
        chief = self._dist.rank == 0
        save, error = None, None
        if chief:
            try:
                save = _Save(self._ctx, self._batches(metadata), dict(metadata, **{SHARDS_KEY: self._dist.size}))
            except Exception as e:
                error = e
        directory, problem = self._dist.broadcast(
            (save.directory if save else None, repr(error) if error else None))
        if problem is not None:
            if error is not None:
                raise error
            raise RuntimeError(f"the chief could not begin the sharded checkpoint: {problem}")
        part = os.path.join(directory, part_name(self._dist.rank))
        failed = None
        try:
            os.mkdir(part, 0o700)
            yield pathlib.Path(part), uuid_of(directory)
        except BaseException as e:
            failed = e
        listing = self._dist.gather(None if failed else relative_files(part))
        outcome = None
        if chief:
            if any(files is None for files in listing):
                save.end(failed=True)
                outcome = "a rank failed while writing its part"
            else:
                try:
                    check_merge(listing)
                    save.end(failed=False)
                except Exception as e:
                    save.end(failed=True)
                    outcome = repr(e)
        outcome = self._dist.broadcast(outcome)
        if failed is not None:
            raise failed
        if outcome is not None:
            raise RuntimeError(f"sharded checkpoint not stored: {outcome}")

    def upload(self, ckpt_dir: Optional[os.PathLike], metadata: Optional[Dict[str, Any]] = None, *,
               shard: bool = False, selector: Optional[Callable[[str], bool]] = None) -> str:
        """Stores a copy of ckpt_dir's files (those `selector` accepts) as a new checkpoint."""
        with self.store_path(metadata, shard=shard) as (path, uuid):
            if ckpt_dir is not None:
                for rel in relative_files(os.fspath(ckpt_dir)):
                    if selector is None or selector(rel):
                        target = path / rel
                        target.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(os.path.join(ckpt_dir, rel), target)
        return uuid

    def _verified(self, storage_id: str):
        if storage_id == self._latest_uuid and self._latest_path:
            info = self._ctx.checkpoints.latest_verified()
            if info is not None:
                return info
        if not self._root:
            raise FileNotFoundError(f"checkpoint {storage_id}: this trial has no checkpoint storage")
        from determined.core import _runtime

        info = _runtime.ringtrial_module().CheckpointInfo(storage_id, os.path.join(self._root, storage_id))
        return self._ctx.checkpoints.restore(info)

    @contextlib.contextmanager
    def restore_path(self, storage_id: str, download_mode: DownloadMode = DownloadMode.LocalWorkersShareDownload,
                     *, selector: Optional[Callable[[str], bool]] = None) -> Iterator[pathlib.Path]:
        """The checkpoint's directory in shared storage, its files first checked
        against their registration (size and SHA-256). A sharded checkpoint is
        seen merged, as Determined stores it: a temporary directory of links to
        every part's files, removed when the block ends."""
        info = self._verified(storage_id)
        shards = shard_count(dict(info.metadata))
        if not shards:
            yield pathlib.Path(info.path)
            return
        view = tempfile.mkdtemp(prefix=f"determined-{storage_id}-")
        try:
            registered = [f["path"] for f in info.files]
            for rel, source in merged_files(str(info.path), shards, registered).items():
                if selector is not None and not selector(rel):
                    continue
                target = os.path.join(view, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.symlink(source, target)
            yield pathlib.Path(view)
        finally:
            shutil.rmtree(view, ignore_errors=True)

    def download(self, storage_id: str, ckpt_dir: os.PathLike,
                 download_mode: DownloadMode = DownloadMode.LocalWorkersShareDownload, *,
                 selector: Optional[Callable[[str], bool]] = None) -> None:
        """Copies the checkpoint's files (merged, when sharded) into ckpt_dir."""
        with self.restore_path(storage_id, selector=selector) as src:
            for rel in relative_files(str(src)):
                if rel in (MANIFEST, OLD_SHARDS_FILE) or (selector is not None and not selector(rel)):
                    continue
                target = pathlib.Path(ckpt_dir) / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src / rel, target)

    def get_metadata(self, storage_id: str) -> Dict[str, Any]:
        info = self._verified(storage_id)
        metadata = dict(info.metadata)
        metadata.setdefault("steps_completed", info.batches)
        return metadata

    def delete(self, storage_id: str) -> None:
        raise NotImplementedError("a trial cannot delete checkpoints on Ringmaster: the experiment's "
                                  "checkpoint policy and `ring checkpoint` do")


def checkpoint_context(ctx, distributed) -> CheckpointContext:
    env = os.environ
    if _env.on_cluster(env):
        return CheckpointContext(ctx, distributed, _env.checkpoint_root(env), _env.latest_checkpoint_uuid(env),
                                 env.get("RING_LATEST_CHECKPOINT"))
    from determined.core import _runtime

    return CheckpointContext(ctx, distributed, _runtime.local_checkpoint_dir(None), None, None)
