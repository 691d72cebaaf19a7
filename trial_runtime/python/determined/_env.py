"""What a trial process is told by its environment (docs/environment.md,
"Determined's Core API"). Pure functions of a mapping, so tests pass dicts."""

import json
import os
from typing import List, Mapping, Optional


def on_cluster(env: Mapping[str, str] = os.environ) -> bool:
    """A Ringmaster agent started this process (it always sets RING_MASTER_URL)."""
    return bool(env.get("RING_MASTER_URL"))


def integer(env: Mapping[str, str], name: str, default: int) -> int:
    value = env.get(name, "")
    if value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {value!r}") from None


def json_value(env: Mapping[str, str], name: str, default):
    value = env.get(name, "")
    if value == "":
        return default
    try:
        return json.loads(value)
    except ValueError as e:
        raise ValueError(f"environment variable {name} is not valid JSON: {e}") from None


def split(value: str) -> List[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def slot_ids(env: Mapping[str, str]) -> List[int]:
    """RING_SLOT_IDS; else LOCAL_WORLD_SIZE slots numbered from 0."""
    if env.get("RING_SLOT_IDS", "") != "":
        return [int(s) for s in split(env["RING_SLOT_IDS"])]
    return list(range(integer(env, "LOCAL_WORLD_SIZE", 1)))


def node_count(env: Mapping[str, str]) -> int:
    world, local = integer(env, "WORLD_SIZE", 1), max(1, integer(env, "LOCAL_WORLD_SIZE", 1))
    return max(1, -(-world // local))


def container_addrs(env: Mapping[str, str]) -> List[str]:
    """RING_CONTAINER_ADDRS; else, on one node, this node's address."""
    if env.get("RING_CONTAINER_ADDRS", "") != "":
        return split(env["RING_CONTAINER_ADDRS"])
    chief = env.get("MASTER_ADDR") or env.get("RING_AGENT_ADDR") or "127.0.0.1"
    own = env.get("RING_AGENT_ADDR") or chief
    if node_count(env) == 1:
        return [chief]
    # Without the launcher's list only the chief's node and this one are known.
    return [chief] if own == chief else [chief, own]


def container_rank(env: Mapping[str, str]) -> int:
    """RING_CONTAINER_RANK; else RANK // LOCAL_WORLD_SIZE (nodes of equal slot counts)."""
    if env.get("RING_CONTAINER_RANK", "") != "":
        return integer(env, "RING_CONTAINER_RANK", 0)
    return integer(env, "RANK", 0) // max(1, integer(env, "LOCAL_WORLD_SIZE", 1))


def latest_checkpoint_uuid(env: Mapping[str, str]) -> Optional[str]:
    """The uuid of RING_LATEST_CHECKPOINT (a directory named after it)."""
    path = env.get("RING_LATEST_CHECKPOINT", "").rstrip("/")
    return os.path.basename(path) or None


def checkpoint_root(env: Mapping[str, str]) -> Optional[str]:
    """The directory checkpoints live in, from RING_CHECKPOINT_STORAGE (shared_fs)."""
    storage = json_value(env, "RING_CHECKPOINT_STORAGE", None)
    if isinstance(storage, dict) and storage.get("host_path"):
        return os.path.join(storage["host_path"], storage.get("storage_path") or "")
    latest = env.get("RING_LATEST_CHECKPOINT", "").rstrip("/")
    return os.path.dirname(latest) or None
