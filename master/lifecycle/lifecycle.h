#pragma once
// The lifecycle: experiments, trials, allocations, searches, checkpoints
// and the scheduling driver, each the one owner of its state, composed in
// dependency order over one resource manager.
//
// Threads: every part is used on one executor only (the master gives it a
// thread of its own; tests call it on theirs), so none has a lock. HTTP
// handlers hop there and await the answer (master/api/lifecycle_call.h);
// the resource manager's events are posted there. SQLite commits and
// checkpoint deletions thus never run on a network io thread. Run() ends
// every event with a scheduling pass over the pools it marked dirty.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "master/lifecycle/allocation_tokens.h"
#include "master/lifecycle/allocations.h"
#include "master/lifecycle/checkpoints.h"
#include "master/lifecycle/experiment_settings.h"
#include "master/lifecycle/experiments.h"
#include "master/lifecycle/log_policies.h"
#include "master/lifecycle/rank_events.h"
#include "master/lifecycle/scheduling_driver.h"
#include "master/lifecycle/searches.h"
#include "master/lifecycle/tasks.h"
#include "master/lifecycle/trial_outcomes.h"
#include "master/lifecycle/trial_progress.h"
#include "master/lifecycle/trials.h"
#include "master/rendezvous/rendezvous_store.h"
#include "master/scheduler/pool_settings.h"

namespace ring {

struct LifecycleOptions {
  std::chrono::milliseconds heartbeat_timeout{
      10000};  // an unreported allocation's grace after its node returns
  std::chrono::milliseconds reconnect_window{25000};  // with the timeout: how long recovery waits for nodes
  uint64_t max_model_bytes = 64ull << 20;             // model definition tar.gz limit
  std::string checkpoint_root;                        // shared_fs host_path when a config has none
  std::vector<std::string> checkpoint_allowed_roots;  // besides checkpoint_root, where host_path may be
  std::vector<PoolSettings> pools = DefaultPools();   // resource pools and their policies
  std::vector<std::string> own_dirs;                  // the master's folders, which no bind mount may reach
  LogLimits log_limits;                               // per allocation: line length and rate
  IdleTimeoutLimits idle_limits;                      // shells' and notebooks' idle_timeout: default, maximum
  // Observers for the master's metrics; each may be empty.
  std::function<void(const std::string& pool, double seconds)> on_scheduler_pass;
  std::function<void()> on_trial_restart;
  // An allocation ended (on the lifecycle's thread): what others keep of it
  // (terminals' idle clocks, announced services) can go.
  std::function<void(const std::string& allocation_id, int64_t task_id)> on_allocation_ended;
  // An experiment's state changed (written already), with its config when
  // known; a batch of a trial's log lines (tokens hidden). The webhooks'
  // triggers (master/notifications); on the lifecycle's thread, never waiting.
  std::function<void(const ExperimentRecord&, RunState from, const ExperimentConfig* config)>
      on_experiment_state;
  RankEvents::TrialLinesHandler on_trial_lines;
};

class Lifecycle {
 public:
  // Runs a function on the lifecycle's executor (later, in order).
  using Post = std::function<void(std::function<void()>)>;
  using RmFactory = std::function<std::unique_ptr<ResourceManager>(RmEvents& events)>;
  // `post` defers the resource manager's events to the executor; null runs
  // them at once on the calling thread (tests).
  Lifecycle(Store& store, LifecycleOptions options, const RmFactory& make_rm, Post post = nullptr);
  ~Lifecycle();

  // Rebuilds allocations, queues and searchers from the store at start.
  Status Recover(SteadyTime now);
  // Runs `fn` on this (the lifecycle's) thread, then a scheduling pass
  // over the pools it marked dirty.
  template <typename F>
  auto Run(F&& fn) {
    if constexpr (std::is_void_v<decltype(fn(*this))>) {
      fn(*this);
      Settle();
    } else {
      auto result = fn(*this);
      Settle();
      return result;
    }
  }
  // Deadlines of nodes, unreported allocations and ignored preemptions,
  // then the scheduling pass; a few times a second.
  void Tick(SteadyTime now);

  Experiments& experiments() { return experiments_; }
  TrialOutcomes& outcomes() { return outcomes_; }
  Searches& searches() { return searches_; }
  Allocations& allocations() { return allocations_; }
  Tasks& tasks() { return tasks_; }
  Checkpoints& checkpoints() { return checkpoints_; }
  ExperimentSettings& settings() { return settings_; }
  SchedulingDriver& scheduling() { return scheduling_; }
  TrialProgress& progress() { return progress_; }
  ResourceManager& rm() { return *rm_; }
  // Thread-safe: used on the io threads without coming here.
  AllocationTokens& tokens() { return tokens_; }
  RendezvousStore& rendezvous() { return rendezvous_; }

 private:
  class Events;
  void Settle();

  Store& store_;
  const LifecycleOptions options_;
  AllocationTokens tokens_;
  RendezvousStore rendezvous_;
  std::unique_ptr<Events> events_;
  std::unique_ptr<ResourceManager> rm_;
  ExperimentSettings settings_;
  Trials trials_;
  Allocations allocations_;
  Tasks tasks_;
  LogPolicies log_policies_;
  RankEvents ranks_;
  Searches searches_;
  Checkpoints checkpoints_;
  SchedulingDriver scheduling_;
  Experiments experiments_;
  TrialOutcomes outcomes_;
  TrialProgress progress_;
};

}  // namespace ring
