"""det.core: Determined's Core API over Ringmaster's trial runtime."""

from determined.core._checkpoint import CheckpointContext, DownloadMode
from determined.core._distributed import DistributedContext, DummyDistributedContext
from determined.core._preempt import PreemptContext, PreemptMode
from determined.core._searcher import SearcherContext, SearcherMode, SearcherOperation, Unit
from determined.core._train import EarlyExitReason, TrainContext
from determined.core._context import Context, InvalidHP, init

__all__ = ["CheckpointContext", "Context", "DistributedContext", "DownloadMode", "DummyDistributedContext",
           "EarlyExitReason", "InvalidHP", "PreemptContext", "PreemptMode", "SearcherContext",
           "SearcherMode", "SearcherOperation", "TrainContext", "Unit", "init"]
