"""core_context.searcher: the older contract, where the trial trains as long as
each searcher operation says (ringtrial's pulled operations).

As in Determined, an operation's length is in the unit of the config's
searcher.max_length ({epochs: 20} gives lengths in epochs, get_configured_units()
EPOCHS; a bare integer gives lengths with no unit, None). The master hands
out lengths in batches; RING_MAX_LENGTH_UNIT, RING_MAX_LENGTH_VALUE and
RING_OPERATION_LENGTHS (docs/environment.md) say what each is in the unit.
"""

import enum
import logging
import os
from typing import Dict, Iterator, Mapping, Optional

from determined import _env

logger = logging.getLogger("determined.core")


class Unit(enum.Enum):
    EPOCHS = "EPOCHS"
    RECORDS = "RECORDS"
    BATCHES = "BATCHES"


class SearcherMode(enum.Enum):
    WorkersAskChief = "WORKERS_ASK_CHIEF"
    ChiefOnly = "CHEIF_ONLY"


def configured_units(env: Mapping[str, str]) -> Optional[Unit]:
    """RING_MAX_LENGTH_UNIT; None for a bare max_length or none at all."""
    value = env.get("RING_MAX_LENGTH_UNIT", "")
    return Unit[value.upper()] if value.upper() in Unit.__members__ else None


def operation_lengths(env: Mapping[str, str]) -> Dict[int, int]:
    """RING_OPERATION_LENGTHS, "batches:length,...", as {batches: length in the unit}."""
    out: Dict[int, int] = {}
    for pair in _env.split(env.get("RING_OPERATION_LENGTHS", "")):
        batches, _, length = pair.partition(":")
        try:
            out[int(batches)] = int(length)
        except ValueError:
            raise ValueError(f"RING_OPERATION_LENGTHS must be batches:length pairs, got {pair!r}") from None
    return out


class LengthUnits:
    """Operation lengths in batches, as the config's unit."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.units = configured_units(env)
        self.max_value = _env.integer(env, "RING_MAX_LENGTH_VALUE", 0)
        self.max_batches = _env.integer(env, "RING_MAX_LENGTH_BATCHES", 0)
        self._table = operation_lengths(env)

    def of(self, batches: int) -> int:
        if self.units in (None, Unit.BATCHES):
            return batches
        if batches in self._table:
            return self._table[batches]
        if self.max_batches > 0 and self.max_value > 0:  # not in the plan: in proportion
            return max(1, round(batches * self.max_value / self.max_batches))
        return batches


class SearcherOperation:
    """Train until `length` (in the config's unit), validate, then report_completed(searcher metric)."""

    def __init__(self, op, length: int, is_chief: bool) -> None:
        self._op = op  # ringtrial's operation; None for one the package made
        self._length = length
        self._is_chief = is_chief
        self._completed = False

    @property
    def length(self) -> int:
        return self._length

    def report_progress(self, length: float) -> None:
        """`length` in the unit of .length; the master counts progress from reported batches."""
        if not self._is_chief:
            raise RuntimeError("you must only call op.report_progress() from the chief worker")
        if self._completed and length != self._length:
            raise RuntimeError("you must not call op.report_progress() after op.report_completed()")
        logger.debug(f"op.report_progress({length}) of {self._length}")

    def report_completed(self, searcher_metric) -> None:
        if not self._is_chief:
            raise RuntimeError("you must only call op.report_completed() from the chief worker")
        if self._completed:
            raise RuntimeError("you may only call op.report_completed() once")
        self._completed = True
        if self._op is not None:
            self._op.report_completed(float(searcher_metric))


class SearcherContext:
    def __init__(self, ctx, distributed, env: Optional[Mapping[str, str]] = None) -> None:
        self._ctx = ctx
        self._dist = distributed
        env = os.environ if env is None else env
        self._units = LengthUnits(env)
        # max_length the master cannot count in batches (a config warning):
        # no operations from the master, one made here, as Determined 0.38 does.
        self._made = (_env.on_cluster(env) and self._units.max_batches <= 0 and self._units.max_value > 0)

    def operations(self, searcher_mode: SearcherMode = SearcherMode.WorkersAskChief,
                   auto_ack: bool = True) -> Iterator[SearcherOperation]:
        chief = self._dist.rank == 0
        if self._made:
            ops = iter([None])
        else:
            ops = iter(self._ctx.searcher.operations())
        for op in ops:
            length = self._units.max_value if op is None else self._units.of(op.length)
            wrapped = SearcherOperation(op, length, chief)
            yield wrapped
            if chief and not wrapped._completed:
                raise RuntimeError("you must call op.report_completed() on each operation before "
                                   "asking for the next one")

    def acknowledge_out_of_ops(self) -> None:
        pass

    def get_configured_units(self) -> Optional[Unit]:
        """The unit of searcher.max_length in the config; None for a bare integer."""
        return self._units.units
