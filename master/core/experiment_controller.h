#pragma once
// The master's lifecycle core: experiments, trials and allocations, the agents
// they run on, and scheduling. Owns all of that mutable state behind one
// mutex (mu_); called from HTTP handlers, agent channel sessions and the
// periodic tick, on any io thread. Every transition is written to the Store
// before it is acted on (a start sent, a reply given).
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/agent_protocol.h"
#include "common/experiment_config.h"
#include "common/searcher/searcher.h"
#include "master/core/agent_registry.h"
#include "master/core/log_limiter.h"
#include "master/core/pool_settings.h"
#include "master/core/port_registry.h"
#include "master/core/rendezvous_store.h"
#include "master/store/store.h"

namespace ring {

struct ControllerOptions {
  std::chrono::milliseconds heartbeat_interval{1000};  // agents send heartbeats this often
  std::chrono::milliseconds heartbeat_timeout{10000};  // silence that closes an agent's connection
  std::chrono::milliseconds reconnect_window{25000};   // a disconnected agent is lost after this
  std::chrono::milliseconds kill_grace{10000};         // SIGTERM to SIGKILL on the agent
  uint64_t max_model_bytes = 64ull << 20;              // model definition tar.gz limit
  std::string checkpoint_root;                         // shared_fs host_path when a config has none
  std::vector<PoolSettings> pools = DefaultPools();    // resource pools and their policies
  LogLimits log_limits;                                // per allocation: line length and rate
  // Observers for the master's metrics; each may be empty. Called under the
  // controller's lock: keep them cheap.
  std::function<void(const std::string& pool, double seconds)> on_scheduler_pass;
  std::function<void()> on_trial_restart;
};

// An experiment's scheduling settings in effect: its config's, or as set live.
struct EffectiveResources {
  std::string pool;
  int slots_per_trial = 1;
  int64_t priority = 42;
  double weight = 1;
  std::optional<int64_t> max_slots;
};

// One allocation that has not ended yet.
struct LiveAllocation {
  AllocationRecord record;
  int64_t experiment_id = 0;
  std::string pool;
  std::vector<Placement> placements;  // empty while PENDING
  int world_size = 0;
  std::set<int> exited_ranks;
  std::optional<int> failure_code;            // first non-zero exit of any rank
  std::string failure_detail;                 // "exited with code 3", "killed by signal 9"
  std::string stop_reason;                    // set when the master asked the ranks to stop
  std::optional<SteadyTime> report_deadline;  // after an agent reconnects without it
  int master_port = 0;
  bool infra_failure = false;                  // ended by the platform (agent lost...), not the trial
  bool preempt_requested = false;              // the trial was asked to checkpoint and exit
  bool preempt_acked = false;                  // ... and said it would
  std::optional<SteadyTime> preempt_deadline;  // killed when still running then
  std::string invalid_hparams;                 // the trial said its hyperparameters are invalid
  std::string preempt_reason;                  // "paused" or "preempted", once asked to stop
  int64_t started_seq = 0;                     // order of starts: the newest is preempted first
  bool told_done = false;                      // the trial was told it has no operation
};

// An experiment's searcher and which trial each of its requests became.
struct ExperimentSearch {
  search::Searcher searcher;
  std::map<search::RequestId, int64_t> trial_of;
  std::map<int64_t, search::RequestId> request_of;
};

class ExperimentController {
 public:
  // Ok when `token` is the token of live allocation `allocation_id`: the
  // check every trial API call passes first. kUnauthenticated for a missing
  // or wrong token, kConflict for an ended allocation, kNotFound for none.
  Status AuthorizeAllocation(const std::string& allocation_id, const std::string& token);

  ExperimentController(Store& store, ControllerOptions options);

  // Rebuilds the in-memory state from the store at start.
  Status Recover(SteadyTime now);

  // REST actions.
  Result<int64_t> CreateExperiment(const std::string& config_yaml, const std::string& model_tar_gz,
                                   bool activate, const std::string& owner);
  Status Kill(int64_t experiment_id);
  Status Pause(int64_t experiment_id);
  Status Activate(int64_t experiment_id);
  Status SetArchived(int64_t experiment_id, bool archived);
  // PATCH: any of {"priority": 1-99, "weight": > 0, "max_slots": >= 1 or null}; takes effect at once.
  Status SetResources(int64_t experiment_id, const nlohmann::json& patch);
  // Stops new placements on an agent; without `drain` its running work is
  // preempted (checkpoint and exit, then it resumes elsewhere).
  Status DisableAgent(const std::string& agent_id, bool drain);
  Status EnableAgent(const std::string& agent_id);
  EffectiveResources Resources(int64_t experiment_id);

  // Trial API, authorised by the allocation token.
  Result<int64_t> ReportMetrics(const std::string& allocation_id, const std::string& token,
                                const nlohmann::json& body);
  Result<std::string> ModelDefinition(const std::string& allocation_id, const std::string& token);
  // Registers a completely written checkpoint; true when newly stored.
  Result<bool> RegisterCheckpoint(const std::string& allocation_id, const std::string& token,
                                  const nlohmann::json& body);
  // A checkpoint of the allocation's own trial, for verifying a restore.
  Result<CheckpointRecord> TrialCheckpoint(const std::string& allocation_id, const std::string& token,
                                           const std::string& uuid);
  Result<bool> PreemptionRequested(const std::string& allocation_id, const std::string& token);
  Status AcknowledgePreemption(const std::string& allocation_id, const std::string& token);
  // The trial's searcher operation: {"operation": {"length": N} | null, "done": bool}.
  // With `after`, an operation of length <= after is not answered yet
  // (operation null, done false): its completion has not arrived.
  Result<nlohmann::json> SearcherOperation(const std::string& allocation_id, const std::string& token,
                                           std::optional<int64_t> after);
  // The chief completed its operation of `length` with the searcher metric;
  // false when that is not the outstanding operation (a retry).
  Result<bool> CompleteSearcherOperation(const std::string& allocation_id, const std::string& token,
                                         const nlohmann::json& body);
  Status ReportInvalidHparams(const std::string& allocation_id, const std::string& token,
                              const nlohmann::json& body);
  // The allocation's rendezvous key-value store (rendezvous_store.h),
  // authorised by its token like every trial API call.
  Status RendezvousSet(const std::string& allocation_id, const std::string& token, const std::string& key,
                       std::string value);
  // With `wake`, a missing key registers it (RendezvousStore::Get).
  Result<RendezvousStore::Lookup> RendezvousGet(const std::string& allocation_id, const std::string& token,
                                                const std::string& key,
                                                RendezvousStore::Waker wake = nullptr);
  void RendezvousCancelWait(const std::string& allocation_id, RendezvousStore::WaitId wait);
  Result<RendezvousStore::Check> RendezvousCheck(const std::string& allocation_id, const std::string& token,
                                                 const std::vector<std::string>& keys);
  // The outstanding operation length of a trial, for the trial view.
  std::optional<int64_t> TrialOperation(int64_t experiment_id, int64_t trial_id);
  // Where a checkpoint's files are, from its storage description.
  static std::string CheckpointDir(const CheckpointRecord& c);

  nlohmann::json AgentsJson();
  nlohmann::json JobsJson();
  const std::vector<PoolSettings>& Pools() const { return options_.pools; }  // fixed at start

  // Agent channel events.
  // Answers with `welcome` on the channel, then may send starts.
  void OnAgentHello(const proto::Hello& hello, std::shared_ptr<AgentChannel> channel, SteadyTime now);
  void OnAgentMessage(const std::string& agent_id, const proto::Message& message, SteadyTime now);
  void OnAgentDisconnected(const std::string& agent_id, const AgentChannel* channel, SteadyTime now);

  // Heartbeat deadlines and scheduling; called a few times a second.
  void Tick(SteadyTime now);

 private:
  // Everything below runs with mu_ held.
  const ExperimentConfig* ConfigLocked(int64_t experiment_id);
  EffectiveResources ResourcesLocked(int64_t experiment_id);
  Status CheckPoolLocked(const ResourcesConfig& resources);
  // Searchers (search_driver.cc).
  using SearchEvent = std::function<std::vector<search::Action>(search::Searcher&)>;
  ExperimentSearch* SearchLocked(int64_t experiment_id);
  void SearchEventLocked(int64_t experiment_id, SearchEvent event);
  void ApplySearchActionLocked(int64_t experiment_id, const search::Action& action,
                               std::deque<SearchEvent>& follow_ups);
  // What a trial that exited 0 on its own has left to do, by its searcher.
  enum class FinishedTrial {
    kCompleted,    // closed by the searcher (or not searched)
    kWaiting,      // no operation now: waits, holding no slots, for a promotion or a close
    kRequeue,      // has an operation again: runs on from its latest checkpoint
    kExitedEarly,  // exited without completing its operation
  };
  FinishedTrial OnTrialFinishedLocked(const TrialRecord& trial, const LiveAllocation& alloc);
  std::optional<double> StoredSearcherMetricLocked(int64_t trial_id, int64_t length,
                                                   const ExperimentConfig& config);
  void ReconcileSearchLocked(int64_t experiment_id);
  // Moves the experiment's non-ended trials that have no allocation to `to`.
  Status SetIdleTrialsLocked(int64_t experiment_id, RunState to);
  void UpdateProgressLocked(int64_t experiment_id);
  Status QueueAllocationLocked(const TrialRecord& trial, const std::string& pool, int slots);
  void ScheduleLocked();
  void StartAllocationLocked(LiveAllocation& alloc, const Assignment& assignment);
  void SendStartsLocked(const LiveAllocation& alloc, const std::string& token);
  void OnProcessStateLocked(const std::string& agent_id, const proto::StateChange& change);
  void OnLogsLocked(const proto::LogBatch& batch);
  void OnAgentLostLocked(const std::string& agent_id);
  void StopAllocationLocked(LiveAllocation& alloc, const std::string& reason);
  void EndAllocationLocked(const std::string& allocation_id, const std::string& exit_reason);
  void OnTrialAllocationEndedLocked(LiveAllocation& alloc);
  void FinishExperimentIfDoneLocked(int64_t experiment_id);
  Status TransitionExperimentLocked(ExperimentRecord& exp, RunState to);
  void UpdateBestLocked(TrialRecord& trial, const ExperimentConfig& config, double value);
  // After AddMetrics (which raised the trial's total batches): the
  // experiment's progress, the trial's and the experiment's best validation,
  // each written only if it moved.
  Status RecordProgressLocked(int64_t trial_id, int64_t experiment_id,
                              const std::vector<MetricReport>& reports);
  nlohmann::json CheckpointStorageLocked(const ExperimentConfig& config) const;
  // Asks the trial to checkpoint and exit; killed after preemption_timeout.
  // `reason` is "paused" (the trial waits for activate) or "preempted" (it
  // goes back to the queue).
  void RequestPreemptionLocked(LiveAllocation& alloc, SteadyTime now, const std::string& reason = "paused");
  void CollectCheckpointsLocked(int64_t experiment_id);
  Result<LiveAllocation*> AuthorizeLocked(const std::string& allocation_id, const std::string& token);

  // The allocations' rendezvous stores, each open from the assignment to the
  // end. Guarded by its own mutex (taken after mu_), so reading and writing
  // keys and values does not hold mu_.
  RendezvousStore rendezvous_;
  std::mutex mu_;  // guards everything below
  Store& store_;
  ControllerOptions options_;
  AgentRegistry agents_;
  PortRegistry ports_;
  std::map<std::string, LiveAllocation> live_;          // by allocation id
  std::deque<std::string> pending_;                     // allocation ids in queue order
  std::map<int64_t, ExperimentConfig> configs_;         // parsed configs by experiment id
  std::map<int64_t, ExperimentSearch> searches_;        // searchers by experiment id
  std::map<int64_t, ResourceOverrides> overrides_;      // live resource settings, read through
  std::map<std::string, std::string> pending_reasons_;  // of the last scheduling pass, by allocation
  std::map<std::string, int> pass_positions_;           // 1-based place in its pool's last pass order
  int64_t next_started_seq_ = 1;
  std::map<std::pair<std::string, int>, int64_t> log_seq_;  // last log batch seq per (allocation, rank)
  LogLimiter log_limiter_;
};

}  // namespace ring
