#pragma once
// What the lifecycle asks of whatever runs allocations' processes: offer
// slots for a scheduling pass, launch an allocation's ranks on the slots the
// scheduler chose, stop them, free their slots, and tell the lifecycle what
// happens to them. Our own agents (master/rm/agentrm) are one implementation;
// a batch system such as Slurm is another, added beside it without touching
// the lifecycle (docs/architecture.md says how).
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/agent_protocol.h"
#include "common/end_cause.h"
#include "common/experiment_config.h"
#include "common/launch_mode.h"
#include "common/task_kind.h"
#include "master/scheduler/scheduler.h"

namespace ring {

using SteadyTime = std::chrono::steady_clock::time_point;

// One allocation's ranks, ready to run: the same for every rank but the
// rank numbers, which the resource manager hands out along `placements`
// (in rank order: rank 0 on the first slot of the first placement).
struct LaunchSpec {
  std::string allocation_id;
  std::string token;          // the allocation token, given to each rank
  int64_t trial_id = 0;       // 0 for a task that is not a trial
  int64_t experiment_id = 0;  // 0 for a task that is not a trial
  int64_t task_id = 0;
  TaskKind task_kind = TaskKind::kTrial;
  std::vector<Placement> placements;
  int world_size = 1;
  // Resolved (never kAuto): one process per slot, or one per agent.
  LaunchMode launch = LaunchMode::kPerSlot;
  int master_port = 0;
  std::string entrypoint;
  std::vector<std::string> entrypoint_argv;  // the list form: run without a shell
  std::string hparams_json;
  std::string latest_checkpoint;  // a directory, empty if none
  std::map<std::string, std::string> environment;
  // Added to `environment` on ranks of CPU slots, or of GPU slots.
  std::map<std::string, std::string> cpu_environment;
  std::map<std::string, std::string> cuda_environment;
  std::string model_definition_path;
  std::string owner;  // the Ringmaster user who owns the task
  // resources.priority when launched (1..99, lower is more important): a
  // batch system may order its queue by it (docs/slurm.md).
  int64_t priority = 42;
  std::optional<proto::RunAs> run_as;  // the owner's linked Unix account; absent when unlinked
  // environment.image: the container of ranks on CPU slots and on GPU
  // slots (image empty: that kind runs on the host).
  std::optional<proto::Container> cpu_container;
  std::optional<proto::Container> cuda_container;
};

// What a resource manager reports. Called on any thread: the lifecycle's
// implementation posts each event to its own executor.
class RmEvents {
 public:
  virtual ~RmEvents() = default;
  // A rank of an allocation started, runs or exited, as `node` reports it.
  virtual void OnRankState(const std::string& node, const proto::StateChange& change) = 0;
  // Lines a rank of an allocation printed, as `node` reports them.
  virtual void OnLogs(const std::string& node, proto::LogBatch batch) = 0;
  // A node came (back): `running` lists the ranks it still runs. The
  // lifecycle stops those whose allocation has ended and gives the
  // allocations placed there that it does not list one heartbeat timeout to
  // report.
  virtual void OnNodeConnected(const std::string& node, const std::vector<proto::RunningProcess>& running,
                               SteadyTime now) = 0;
  // A node is gone for good: every allocation placed on it has ended.
  virtual void OnNodeLost(const std::string& node) = 0;
  // One allocation's resources are gone without its ranks reporting their
  // exits (a batch job ended, was cancelled or its node failed): it ends as
  // an infrastructure failure (EndCause::kAgentLost), `why` says how.
  virtual void OnAllocationLost(const std::string& allocation_id, const std::string& why) = 0;
  // One allocation's ranks never started because of how it was set up (a
  // batch system refused its job, or the job's agents never connected): it
  // fails (EndCause::kFailed, counted against max_restarts), since trying
  // the same again would fail the same way.
  virtual void OnAllocationNeverStarted(const std::string& allocation_id, const std::string& why) = 0;
  // The infrastructure is about to take one allocation's resources (Slurm
  // cancels or preempts its job and gives it a grace time): its ranks are
  // asked to checkpoint and exit, as in a preemption.
  virtual void OnAllocationPreempted(const std::string& allocation_id, const std::string& why) = 0;
  // An operator took a node out without draining: its allocations are
  // preempted (checkpoint and exit, then resume elsewhere).
  virtual void OnNodeEvicted(const std::string& node) = 0;
  // Slots came or went (a node connected, was enabled, ...): schedule again.
  virtual void OnCapacityChanged() = 0;
};

class ResourceManager {
 public:
  virtual ~ResourceManager() = default;
  // Every node with its free slots, disabled ones marked (AgentView::enabled).
  virtual std::vector<AgentView> Offers() const = 0;
  // Ok when a trial of `resources` (its resource_pool, slots_per_trial and
  // is_single_node) can ever be placed as the pool's nodes are now;
  // kInvalidConfig naming the field otherwise (and its line, when the config
  // gives one). `declared` are the pools of master.yaml, which exist even
  // without nodes.
  virtual Status CheckFits(const ResourcesConfig& resources,
                           const std::vector<std::string>& declared) const = 0;
  // Ok when trials with a container image can run in `pool`: some node of
  // it has a container runtime (`runtime` when not empty), or it has no
  // node yet. kInvalidConfig naming the pool otherwise.
  virtual Status CheckContainers(const std::string& pool, const std::string& runtime) const = 0;
  // Holds the placements' slots for the allocation and starts its ranks.
  virtual void Launch(const LaunchSpec& spec) = 0;
  // Holds the slots of an allocation recovered from the store after a
  // master restart; its nodes have until `deadline` to come back.
  // `processes` as recorded (AllocationRecord::processes): 0 for one rank
  // per slot, else one per placement.
  virtual void Adopt(const std::string& allocation_id, const std::vector<Placement>& placements,
                     int processes, const std::string& pool, SteadyTime deadline) = 0;
  // Asks every rank of the allocation to stop (SIGTERM, SIGKILL after the
  // grace); with `node` only the ranks there.
  virtual void Kill(const std::string& allocation_id, const std::vector<Placement>& placements, EndCause why,
                    const std::string& node = "") = 0;
  // The allocation has ended: its slots are free.
  virtual void Release(const std::string& allocation_id) = 0;
  // Deadlines (heartbeats, reconnect windows); reports losses as events.
  virtual void Tick(SteadyTime now) = 0;
};

}  // namespace ring
