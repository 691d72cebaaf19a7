"""core_context.searcher: the older contract, where the trial trains as long as
each searcher operation says (ringtrial's pulled operations)."""

import enum
import logging
from typing import Iterator

logger = logging.getLogger("determined.core")


class SearcherMode(enum.Enum):
    WorkersAskChief = "WORKERS_ASK_CHIEF"
    ChiefOnly = "CHEIF_ONLY"


class SearcherOperation:
    """Train until `length` batches, validate, then report_completed(searcher metric)."""

    def __init__(self, op, is_chief: bool) -> None:
        self._op = op
        self._is_chief = is_chief
        self._completed = False

    @property
    def length(self) -> int:
        return self._op.length

    def report_progress(self, length: float) -> None:
        if self._completed and length != self.length:
            raise RuntimeError("you must not call op.report_progress() after op.report_completed()")

    def report_completed(self, searcher_metric) -> None:
        if not self._is_chief:
            raise RuntimeError("only the chief may call op.report_completed()")
        if self._completed:
            raise RuntimeError("you may only call op.report_completed() once")
        self._completed = True
        self._op.report_completed(float(searcher_metric))


class SearcherContext:
    def __init__(self, ctx, distributed) -> None:
        self._ctx = ctx
        self._dist = distributed

    def operations(self, searcher_mode: SearcherMode = SearcherMode.WorkersAskChief,
                   auto_ack: bool = True) -> Iterator[SearcherOperation]:
        for op in self._ctx.searcher.operations():
            wrapped = SearcherOperation(op, self._dist.rank == 0)
            yield wrapped
            if self._dist.rank == 0 and not wrapped._completed:
                raise RuntimeError("you must call op.report_completed() on each operation before "
                                   "asking for the next one")

    def acknowledge_out_of_ops(self) -> None:
        pass

    def get_configured_units(self):
        return None
