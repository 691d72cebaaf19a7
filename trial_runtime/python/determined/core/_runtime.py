"""The one ringtrial Context of this process, and the local-mode notice.

A process holds one ringtrial Context (it owns the metrics reporter, the
preemption watch and the checkpoint clock); core.init() and the collectives
share it. Its rank information comes from the DistributedContext the script
passed, which may differ from the RANK this process inherited (a worker
started by a per-node launcher inherits the launcher's).
"""

import os
import sys

from determined import _env

_context = None  # the ringtrial.Context, once made
_said_local = False


def say_local_once(what: str) -> None:
    """Tells stderr once per process that this is not a Ringmaster cluster."""
    global _said_local
    if _said_local:
        return
    _said_local = True
    print(f"determined: not on a Ringmaster cluster (RING_MASTER_URL is not set): local mode, {what}",
          file=sys.stderr, flush=True)


def local_checkpoint_dir(checkpoint_storage) -> str:
    """Where local mode keeps checkpoints: the given path, else Determined's default folder."""
    if isinstance(checkpoint_storage, str) and checkpoint_storage:
        return checkpoint_storage
    if isinstance(checkpoint_storage, dict) and checkpoint_storage.get("host_path"):
        return os.path.join(checkpoint_storage["host_path"], checkpoint_storage.get("storage_path") or "")
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "determined")


def ringtrial_module():
    """The ringtrial module, imported when first needed (cluster information and
    the launchers work without it), with the reason when it cannot be."""
    try:
        import ringtrial
    except ImportError as e:
        version = ".".join(map(str, sys.version_info[:2]))
        raise ImportError(
            f"determined needs Ringmaster's ringtrial module beside it, built for the CPython version that "
            f"runs the trial; {sys.executable} is {version} and cannot import it ({e}). See "
            "docs/migrating-from-determined.md, \"How a site chooses the trial's Python\"") from e
    return ringtrial


def context(rank: int = 0, size: int = 1, local_rank: int = 0, local_size: int = 1,
            checkpoint_storage=None):
    """This process's ringtrial.Context, made on the first call with these ranks."""
    global _context
    if _context is not None:
        return _context
    ringtrial = ringtrial_module()
    env = dict(os.environ)
    env.update(RANK=str(rank), WORLD_SIZE=str(size), LOCAL_RANK=str(local_rank),
               LOCAL_WORLD_SIZE=str(local_size))
    argv = [sys.argv[0] if sys.argv else "python"]
    if not _env.on_cluster(env):
        argv += ["--checkpoint-dir", local_checkpoint_dir(checkpoint_storage)]
    _context = ringtrial.Context.from_environment(argv, env)
    return _context


def existing():
    return _context
