"""Determined's Core API on Ringmaster.

`import determined as det` gives a script written for Determined 0.38's Core
API the same calls on a Ringmaster cluster, over Ringmaster's trial runtime
(the `ringtrial` module beside this package): cluster information, metrics,
checkpoints, preemption, searcher operations and collectives. Outside a
cluster it behaves as Determined's local mode does. See
docs/migrating-from-determined.md.
"""

from determined._info import ClusterInfo, TrialInfo, get_cluster_info
from determined import core
from determined.core import InvalidHP

# The format Determined's scripts give logging.basicConfig: the level first,
# so that the web UI's log viewer can filter by it.
LOG_FORMAT = "%(levelname)s: [%(process)s] %(name)s: %(message)s"

__version__ = "0.38.1+ringmaster"

__all__ = ["ClusterInfo", "InvalidHP", "TrialInfo", "get_cluster_info", "core", "LOG_FORMAT"]
