"""core_context.preempt: whether the platform wants the trial to stop now.

The chief watches (ringtrial's long poll of the master, and SIGTERM); with
several ranks the chief's answer is broadcast, so every rank must call
should_preempt() at the same points (Determined's WorkersAskChief). A True
answer is acknowledged, so the trial's exit 0 pauses it rather than completing
it.
"""

import enum


class PreemptMode(enum.Enum):
    WorkersAskChief = "WORKERS_ASK_CHIEF"
    ChiefOnly = "CHIEF_ONLY"
    WorkersAskMaster = "WORKERS_ASK_MASTER"


class PreemptContext:
    def __init__(self, ctx, distributed, mode: PreemptMode = PreemptMode.WorkersAskChief) -> None:
        self._ctx = ctx
        self._dist = distributed
        self._mode = mode
        self._acknowledged = False

    def should_preempt(self, auto_ack: bool = True) -> bool:
        if self._dist.size > 1 and self._mode == PreemptMode.WorkersAskChief:
            answer = self._dist.broadcast(self._ctx.preempt.should_preempt() if self._dist.rank == 0 else None)
        elif self._dist.size > 1 and self._mode == PreemptMode.ChiefOnly and self._dist.rank != 0:
            raise RuntimeError("PreemptMode.ChiefOnly: only the chief may call should_preempt()")
        else:
            answer = self._ctx.preempt.should_preempt()
        if answer and auto_ack:
            self.acknowledge_preemption_signal()
        return bool(answer)

    def acknowledge_preemption_signal(self) -> None:
        if not self._acknowledged and self._dist.rank == 0:
            self._acknowledged = True
            self._ctx.preempt.acknowledge()
