#pragma once
// Allocations: the attempts of tasks (trials, commands, ...) on resources that have
// not ended — queued, assigned, starting, running, terminating. Owns that
// table, the queue order, the MASTER_PORTs and each allocation's rendezvous
// store and token while it lives; writes every change of an allocation's
// state to the store before acting on it. Ending one hands it to the
// handler set with OnEnded (TrialOutcomes) before it is forgotten. Used on
// the lifecycle's executor only.
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/end_cause.h"
#include "master/lifecycle/allocation_tokens.h"
#include "master/lifecycle/port_registry.h"
#include "master/lifecycle/preemption.h"
#include "master/rendezvous/rendezvous_store.h"
#include "master/rm/resource_manager.h"
#include "master/store/store.h"

namespace ring {

struct LiveAllocation {
  AllocationRecord record;  // record.task_id: the task it is an attempt of
  TaskKind kind = TaskKind::kTrial;
  bool is_trial() const { return kind == TaskKind::kTrial; }
  // The trial it is an attempt of; only a trial's allocation has one
  // (record.trial_id), so reading it for another kind is a bug.
  int64_t trial_id() const { return record.trial_id.value(); }
  int64_t experiment_id = 0;  // 0 for a task that is not a trial
  std::string pool;
  // In rank order; empty while PENDING.
  const std::vector<Placement>& placements() const { return record.placements; }
  int world_size = 0;  // slots
  // Processes the agents start: world_size under per-slot launch, one per
  // agent under per-node launch. Its ranks (0..processes-1) report exits.
  int processes = 0;
  int process_count() const { return processes > 0 ? processes : world_size; }
  // What the resource manager's Adopt takes: 0 when each slot runs a rank,
  // else the processes, one per placement.
  int adopted_processes() const { return process_count() != world_size ? process_count() : 0; }
  std::set<int> exited_ranks;
  std::optional<int> failure_code;            // first non-zero exit of any rank
  std::string failure_detail;                 // "rank 1 exited with code 3"
  std::optional<EndCause> stop_cause;         // set when the master asked the ranks to stop
  std::optional<SteadyTime> report_deadline;  // after an agent reconnects without it
  int master_port = 0;
  Preemption preemption;
  std::string invalid_hparams;    // the trial said its hyperparameters are invalid
  int64_t started_seq = 0;        // order of starts: the newest is preempted first
  bool told_done = false;         // the trial was told it has no operation
  bool reported_metrics = false;  // its first metric report was logged: it trains
  bool preemptible = true;        // trials checkpoint and exit when asked; other tasks say (TaskSpec)
  bool pending() const { return record.state == AllocationState::kPending; }
};

class Allocations {
 public:
  using EndedHandler = std::function<void(LiveAllocation&)>;
  using DirtyHandler = std::function<void(const std::string& pool)>;
  Allocations(Store& store, ResourceManager& rm, AllocationTokens& tokens, RendezvousStore& rendezvous);
  const AllocationTokens& tokens() const { return tokens_; }
  // What runs when an allocation ends, and when a pool's queue or running
  // set changes (the scheduling driver's dirty mark).
  void SetHandlers(EndedHandler on_ended, DirtyHandler on_dirty);

  // Queues a new allocation of `trial` for `slots` slots in `pool`.
  Status Queue(const TrialRecord& trial, const std::string& pool, int slots);
  // Queues the one allocation of a task that is not a trial, as its spec says.
  Status QueueTask(const TaskRecord& task);
  // Records the scheduler's placements (in rank order), holds a port, opens
  // the rendezvous store and the token; returns the token for the ranks.
  // `processes` as AllocationRecord::processes: 0 for one per slot.
  Result<std::string> Assign(LiveAllocation& alloc, std::vector<Placement> placements, int processes);
  // Asks the ranks to stop; a queued allocation ends at once.
  void Stop(LiveAllocation& alloc, EndCause why);
  // Records the end (the cause and its detail for people), frees everything
  // it held and hands it to the ended handler.
  void End(const std::string& allocation_id, EndCause cause, const std::string& detail);
  // Asks a running allocation to checkpoint and exit (kPaused, kPreempted
  // or kSearcherStopped); it is killed when still running after `timeout`.
  // A task that is not a trial cannot checkpoint: it is stopped at once.
  void RequestPreemption(LiveAllocation& alloc, EndCause why, SteadyTime now, std::chrono::seconds timeout);
  // Rebuilds the table from the store after a master restart; placed
  // allocations' nodes have until `deadline` to come back. Trials' and
  // other tasks' alike: a task's pool and preemptibility are its spec's.
  // `processes_of` counts the processes of an allocation recorded before
  // their number was.
  Status Recover(const std::function<std::string(int64_t experiment_id)>& pool_of,
                 const std::function<int(const LiveAllocation&)>& processes_of, SteadyTime deadline);

  LiveAllocation* Find(const std::string& allocation_id);
  // The live allocation a trial API call names (its token was checked on
  // the way in); kConflict once it has ended, kPermissionDenied when it is
  // not a trial's.
  Result<LiveAllocation*> Live(const std::string& allocation_id);
  bool TrialHasLive(int64_t trial_id) const;
  std::vector<std::string> OfExperiment(int64_t experiment_id) const;
  const std::map<std::string, LiveAllocation>& live() const { return live_; }
  std::map<std::string, LiveAllocation>& live() { return live_; }
  const std::deque<std::string>& queue() const { return queue_; }

 private:
  void Write(const AllocationRecord& record);
  void Enqueue(LiveAllocation alloc);
  void Hold(LiveAllocation& alloc);  // port, rendezvous store, token of a placed allocation

  Store& store_;
  ResourceManager& rm_;
  AllocationTokens& tokens_;
  RendezvousStore& rendezvous_;
  EndedHandler on_ended_;
  DirtyHandler on_dirty_;
  PortRegistry ports_;
  std::map<std::string, LiveAllocation> live_;  // by allocation id
  std::deque<std::string> queue_;               // pending allocation ids in queue order
  int64_t next_started_seq_ = 1;
};

}  // namespace ring
