"""det.get_cluster_info(): what the cluster told this trial process."""

import os
from typing import Any, Dict, List, Mapping, Optional

from determined import _env


class TrialInfo:
    """The trial this process belongs to (ClusterInfo.trial)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.trial_id: int = _env.integer(env, "RING_TRIAL_ID", 0)
        self.experiment_id: int = _env.integer(env, "RING_EXPERIMENT_ID", 0)
        self.trial_seed: int = _env.integer(env, "RING_TRIAL_SEED", 0)
        self.hparams: Dict[str, Any] = _env.json_value(env, "RING_HPARAMS", {})
        self.user_data: Dict[str, Any] = _env.json_value(env, "RING_DATA", {})
        self.searcher_metric: str = env.get("RING_SEARCHER_METRIC", "")
        self.max_length_batches: Optional[int] = _env.integer(env, "RING_MAX_LENGTH_BATCHES", 0) or None

    def __repr__(self) -> str:
        return f"TrialInfo(trial_id={self.trial_id}, experiment_id={self.experiment_id}, hparams={self.hparams})"


class ClusterInfo:
    """Everything a Core API script reads of its task. Ringmaster runs trials only."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.master_url: str = env.get("RING_MASTER_URL", "")
        self.agent_id: str = env.get("RING_AGENT_ID", "")
        self.allocation_id: str = env.get("RING_ALLOCATION_ID", "")
        self.task_id: str = f"trial-{_env.integer(env, 'RING_TRIAL_ID', 0)}"
        self.task_type: str = "TRIAL"
        self.cluster_id: str = ""
        self.slot_ids: List[int] = _env.slot_ids(env)
        self.gpu_uuids: List[str] = _env.split(env.get("CUDA_VISIBLE_DEVICES", ""))
        self.container_addrs: List[str] = _env.container_addrs(env)
        self.container_rank: int = _env.container_rank(env)
        self.latest_checkpoint: Optional[str] = _env.latest_checkpoint_uuid(env)
        self._trial = TrialInfo(env)

    @property
    def trial(self) -> TrialInfo:
        return self._trial

    @property
    def user_data(self) -> Dict[str, Any]:
        """The experiment config's `data` (RING_DATA)."""
        return self._trial.user_data

    @property
    def container_slot_counts(self) -> List[int]:
        return [len(self.slot_ids)] * len(self.container_addrs)

    def __repr__(self) -> str:
        return (f"ClusterInfo(allocation_id={self.allocation_id!r}, trial={self._trial!r}, "
                f"container_rank={self.container_rank}, container_addrs={self.container_addrs})")


def get_cluster_info(env: Optional[Mapping[str, str]] = None) -> Optional[ClusterInfo]:
    """This task's ClusterInfo on a Ringmaster cluster; None elsewhere (local mode)."""
    env = os.environ if env is None else env
    if not _env.on_cluster(env):
        return None
    return ClusterInfo(env)
