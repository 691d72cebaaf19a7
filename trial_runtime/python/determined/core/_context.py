"""det.core.init(): the Core API context of one trial process."""

import logging
from typing import Any, Dict, Optional, Union

from determined import _env
from determined.core import _runtime
from determined.core._checkpoint import CheckpointContext, checkpoint_context
from determined.core._distributed import DistributedContext, from_environment
from determined.core._preempt import PreemptContext, PreemptMode
from determined.core._searcher import SearcherContext
from determined.core._train import EarlyExitReason, TrainContext

logger = logging.getLogger("determined.core")


class InvalidHP(Exception):
    """Raise it in a `with core.init()` block: the searcher is told the
    hyperparameters are invalid and the trial ends without failing."""


class Context:
    """What `with det.core.init() as core_context` gives: train, checkpoint,
    preempt, searcher and distributed."""

    def __init__(self, ctx, distributed: DistributedContext, preempt_mode: PreemptMode,
                 checkpoint_storage=None) -> None:
        self._ctx = ctx
        self.distributed = distributed
        self.train = _Train(ctx, self)
        if _env.on_cluster():
            self.checkpoint: CheckpointContext = checkpoint_context(ctx, distributed)
        else:
            self.checkpoint = CheckpointContext(ctx, distributed,
                                                _runtime.local_checkpoint_dir(checkpoint_storage), None, None)
        self.preempt = PreemptContext(ctx, distributed, preempt_mode)
        self.searcher = SearcherContext(ctx, distributed)

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, typ, value, tb) -> bool:
        if typ is not None and issubclass(typ, InvalidHP):
            self.train.report_early_exit(EarlyExitReason.INVALID_HP)
            logger.info("InvalidHP raised: the searcher was told; the trial exits 0")
            self.close()
            return True  # swallowed, as Determined does
        self.close()
        return False

    def close(self) -> None:
        if not self._ctx.flush():
            logger.warning("some metric reports were not acknowledged by the master")
        self.distributed.close()


class _Train(TrainContext):
    """Remembers the last steps reported, for checkpoints stored without steps_completed."""

    def __init__(self, ctx, owner: Context) -> None:
        super().__init__(ctx)
        self._owner = owner

    def report_training_metrics(self, steps_completed, metrics, batch_metrics=None) -> None:
        self._owner.checkpoint.last_steps_completed = int(steps_completed)
        super().report_training_metrics(steps_completed, metrics, batch_metrics)

    def report_validation_metrics(self, steps_completed, metrics) -> None:
        self._owner.checkpoint.last_steps_completed = int(steps_completed)
        super().report_validation_metrics(steps_completed, metrics)


def init(*, distributed: Optional[DistributedContext] = None,
         checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None,
         preempt_mode: PreemptMode = PreemptMode.WorkersAskChief, tensorboard_mode: Any = None,
         **ignored: Any) -> Context:
    """The Core API context; use it as `with det.core.init() as core_context:`.

    On a Ringmaster cluster it reports to the master; elsewhere (local mode) it
    prints metrics and keeps checkpoints under `checkpoint_storage` (default
    ~/.local/share/determined), saying so once on stderr."""
    distributed = distributed or from_environment()
    if not _env.on_cluster():
        _runtime.say_local_once("metrics are printed and checkpoints kept in "
                                f"{_runtime.local_checkpoint_dir(checkpoint_storage)}")
    elif checkpoint_storage is not None:
        logger.warning("core.init(checkpoint_storage=...) is ignored on a cluster: checkpoints go to the "
                       "experiment's checkpoint_storage")
    ctx = _runtime.context(distributed.rank, distributed.size, distributed.local_rank, distributed.local_size,
                           checkpoint_storage)
    return Context(ctx, distributed, preempt_mode, checkpoint_storage)
