"""core_context.train: metrics and progress, reported through ringtrial."""

import enum
import logging
import math
import numbers
from typing import Any, Dict, List, Optional

logger = logging.getLogger("determined.core")


class EarlyExitReason(enum.Enum):
    INVALID_HP = "EXITED_REASON_INVALID_HP"
    USER_REQUESTED_STOP = "EXITED_REASON_USER_REQUESTED_STOP"


def numeric_metrics(metrics: Dict[str, Any], dropped: set) -> Dict[str, float]:
    """The numbers of `metrics`; nested dicts become "outer/inner" names. Ringmaster
    stores numbers only: other values are left out, each name logged once."""
    out: Dict[str, float] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}/{k}" if prefix else str(k), v)
            return
        number = None
        if isinstance(value, numbers.Real):
            number = float(value)
        elif hasattr(value, "__float__") and not isinstance(value, (str, bytes)):
            try:
                number = float(value)  # numpy scalars, 0-d tensors
            except (TypeError, ValueError):
                number = None
        if number is None or not math.isfinite(number):
            if prefix not in dropped:
                dropped.add(prefix)
                logger.warning(f"metric {prefix!r} is not a finite number ({type(value).__name__}): "
                               "Ringmaster stores numeric metrics only, so it is left out")
            return
        out[prefix] = number

    walk("", metrics)
    return out


class TrainContext:
    """Reports metrics of the trial; only the chief's reports reach the master."""

    def __init__(self, ctx) -> None:
        self._ctx = ctx
        self._dropped: set = set()

    def report_training_metrics(self, steps_completed: int, metrics: Dict[str, Any],
                                batch_metrics: Optional[List[Dict[str, Any]]] = None) -> None:
        self._ctx.report_training_metrics(int(steps_completed), numeric_metrics(metrics, self._dropped))

    def report_validation_metrics(self, steps_completed: int, metrics: Dict[str, Any]) -> None:
        self._ctx.report_validation_metrics(int(steps_completed), numeric_metrics(metrics, self._dropped))

    def report_metrics(self, group: str, steps_completed: int, metrics: Dict[str, Any]) -> None:
        """"training" and "validation" are those kinds; any other group is stored
        with the training metrics, each name prefixed "<group>/"."""
        if group == "training":
            self.report_training_metrics(steps_completed, metrics)
        elif group == "validation":
            self.report_validation_metrics(steps_completed, metrics)
        else:
            if not group or "/" in group:
                raise ValueError(f"metrics group must be a non-empty name without '/', got {group!r}")
            self.report_training_metrics(steps_completed, {group: metrics})

    def report_progress(self, progress: float) -> None:
        """Checked as Determined does; the master computes progress from batches."""
        if not 0.0 <= float(progress) <= 1.0:
            raise ValueError(f"progress must be between 0 and 1, got {progress}")

    def report_early_exit(self, reason: EarlyExitReason) -> None:
        if reason == EarlyExitReason.INVALID_HP:
            if self._ctx.is_chief:
                self._ctx.searcher.report_invalid_hparams("the trial reported invalid hyperparameters")
        else:
            logger.info(f"early exit: {reason.name}; the trial ends with its process's exit code")

    def set_status(self, status: str) -> None:
        logger.info(f"status: {status}")

    def get_experiment_best_validation(self) -> Optional[float]:
        return None

    def get_tensorboard_path(self):
        raise NotImplementedError("Ringmaster has no TensorBoard storage yet")

    def upload_tensorboard_files(self, *args, **kwargs) -> None:
        logger.debug("upload_tensorboard_files(): Ringmaster has no TensorBoard storage yet")
