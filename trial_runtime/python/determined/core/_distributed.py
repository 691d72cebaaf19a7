"""core_context.distributed: ranks, sizes and collectives of Python objects.

The collectives run over a TCP star per group (_star.py) found through the
allocation's rendezvous store on the master; a group is set up on its first
collective, which every member must call. Nothing here needs zmq.
"""

import itertools
import logging
import os
from typing import Any, List, Optional

from determined import _env
from determined.core import _runtime, _star

logger = logging.getLogger("determined.core")

# Each DistributedContext of a process gets the next number; every rank makes
# its contexts in the same order, so the numbers name the same group everywhere.
_generation = itertools.count()

DEFAULT_TIMEOUT_S = 1800.0


class DistributedContext:
    """Rank information, and gather/allgather/broadcast (and their _local forms)."""

    def __init__(self, *, rank: int, size: int, local_rank: int, local_size: int, cross_rank: int,
                 cross_size: int, chief_ip: Optional[str] = None, pub_port: int = 12360,
                 pull_port: int = 12376, port_offset: int = 0, force_tcp: bool = False,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.rank, self.size = int(rank), int(size)
        self.local_rank, self.local_size = int(local_rank), int(local_size)
        self.cross_rank, self.cross_size = int(cross_rank), int(cross_size)
        if not (0 <= self.rank < self.size and 0 <= self.local_rank < self.local_size
                and 0 <= self.cross_rank < self.cross_size):
            raise ValueError(f"inconsistent ranks: rank {rank} of {size}, local_rank {local_rank} of "
                             f"{local_size}, cross_rank {cross_rank} of {cross_size}")
        if self.size > 1 and self.cross_size > 1 and not chief_ip:
            chief_ip = os.environ.get("DET_CHIEF_IP") or os.environ.get("MASTER_ADDR")
        self._chief_ip = chief_ip
        self._timeout = float(timeout_s)
        self._generation = next(_generation)
        self._world: Optional[_star.Star] = None
        self._local: Optional[_star.Star] = None

    @classmethod
    def from_torch_distributed(cls, chief_ip: Optional[str] = None) -> "DistributedContext":
        """From torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
        GROUP_RANK, GROUP_WORLD_SIZE), as determined.launch.torch_distributed sets them."""
        env = os.environ
        size = _env.integer(env, "WORLD_SIZE", 1)
        local_size = _env.integer(env, "LOCAL_WORLD_SIZE", size)
        return cls(rank=_env.integer(env, "RANK", 0), size=size,
                   local_rank=_env.integer(env, "LOCAL_RANK", 0), local_size=local_size,
                   cross_rank=_env.integer(env, "GROUP_RANK", _env.container_rank(env)),
                   cross_size=_env.integer(env, "GROUP_WORLD_SIZE", max(1, size // max(1, local_size))),
                   chief_ip=chief_ip or env.get("DET_CHIEF_IP"))

    def get_rank(self) -> int:
        return self.rank

    def get_local_rank(self) -> int:
        return self.local_rank

    def get_size(self) -> int:
        return self.size

    def get_local_size(self) -> int:
        return self.local_size

    def get_cross_rank(self) -> int:
        return self.cross_rank

    def get_cross_size(self) -> int:
        return self.cross_size

    def get_num_agents(self) -> int:
        return self.cross_size

    def _store(self):
        if not _env.on_cluster():
            raise RuntimeError("collectives between processes need a Ringmaster cluster (RING_MASTER_URL "
                               "is not set): local mode runs one process, size 1")
        ctx = _runtime.context(self.rank, self.size, self.local_rank, self.local_size)
        return _runtime.ringtrial_module().allocation_store(ctx)

    def _world_star(self) -> _star.Star:
        if self._world is None:
            host = self._chief_ip or os.environ.get("RING_AGENT_ADDR") or "127.0.0.1"
            store = self._store() if self.size > 1 else None
            self._world = _star.Star(store, f"determined/{self._generation}/world", self.rank, self.size,
                                     host, "", self._timeout)
        return self._world

    def _local_star(self) -> _star.Star:
        if self._local is None:
            store = self._store() if self.local_size > 1 else None
            self._local = _star.Star(store, f"determined/{self._generation}/node-{self.cross_rank}",
                                     self.local_rank, self.local_size, "127.0.0.1", "127.0.0.1",
                                     self._timeout)
        return self._local

    def gather(self, stuff: Any) -> Optional[List]:
        """Every rank's object, in rank order, on the chief; None elsewhere."""
        return self._world_star().gather(stuff)

    def gather_local(self, stuff: Any) -> Optional[List]:
        return self._local_star().gather(stuff)

    def allgather(self, stuff: Any) -> List:
        star = self._world_star()
        return star.broadcast(star.gather(stuff))

    def allgather_local(self, stuff: Any) -> List:
        star = self._local_star()
        return star.broadcast(star.gather(stuff))

    def broadcast(self, stuff: Any) -> Any:
        """The chief's object, on every rank."""
        return self._world_star().broadcast(stuff)

    def broadcast_local(self, stuff: Any = None) -> Any:
        return self._local_star().broadcast(stuff)

    def close(self) -> None:
        for star in (self._world, self._local):
            if star is not None:
                star.close()
        self._world = self._local = None


class DummyDistributedContext(DistributedContext):
    """One process: rank 0 of 1."""

    def __init__(self) -> None:
        super().__init__(rank=0, size=1, local_rank=0, local_size=1, cross_rank=0, cross_size=1)


def from_environment() -> DistributedContext:
    """What core.init() uses when the script passes no DistributedContext: the
    ranks the agent (or a launcher) gave this process, or one process."""
    if _env.integer(os.environ, "WORLD_SIZE", 1) > 1:
        return DistributedContext.from_torch_distributed()
    return DummyDistributedContext()
