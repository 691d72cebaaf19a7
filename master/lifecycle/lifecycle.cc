#include "master/lifecycle/lifecycle.h"

#include <spdlog/spdlog.h>

namespace ring {

// The resource manager's events, each run as one lifecycle event.
class Lifecycle::Events : public RmEvents {
 public:
  Events(Lifecycle& lifecycle, Post post) : lifecycle_(lifecycle), post_(std::move(post)) {}
  void OnRankState(const std::string& node, const proto::StateChange& change) override {
    Do([node, change](Lifecycle& l) { l.ranks_.OnRankState(node, change); });
  }
  void OnLogs(const std::string& node, proto::LogBatch batch) override {
    Do([node, batch = std::move(batch)](Lifecycle& l) { l.ranks_.OnLogs(node, batch); });
  }
  void OnNodeConnected(const std::string& node, const std::vector<proto::RunningProcess>& running,
                       SteadyTime now) override {
    Do([node, running, now](Lifecycle& l) { l.ranks_.OnNodeConnected(node, running, now); });
  }
  void OnNodeLost(const std::string& node) override {
    Do([node](Lifecycle& l) { l.ranks_.OnNodeLost(node); });
  }
  void OnAllocationLost(const std::string& allocation_id, const std::string& why) override {
    Do([allocation_id, why](Lifecycle& l) { l.ranks_.OnAllocationLost(allocation_id, why); });
  }
  void OnAllocationNeverStarted(const std::string& allocation_id, const std::string& why) override {
    Do([allocation_id, why](Lifecycle& l) {
      l.ranks_.OnAllocationLost(allocation_id, why, EndCause::kFailed);
    });
  }
  void OnAllocationPreempted(const std::string& allocation_id, const std::string& why) override {
    Do([allocation_id, why](Lifecycle& l) {
      l.ranks_.OnAllocationPreempted(allocation_id, why, std::chrono::steady_clock::now());
    });
  }
  void OnNodeEvicted(const std::string& node) override {
    Do([node](Lifecycle& l) { l.ranks_.OnNodeEvicted(node, std::chrono::steady_clock::now()); });
  }
  void OnCapacityChanged() override {
    Do([](Lifecycle& l) { l.scheduling_.MarkAllDirty(); });
  }

 private:
  void Do(std::function<void(Lifecycle&)> event) {
    if (!post_) {
      lifecycle_.Run(event);
      return;
    }
    post_([this, event = std::move(event)] { lifecycle_.Run(event); });
  }
  Lifecycle& lifecycle_;
  Post post_;
};

Lifecycle::Lifecycle(Store& store, LifecycleOptions options, const RmFactory& make_rm, Post post)
    : store_(store),
      options_(std::move(options)),
      tokens_(store),
      events_(std::make_unique<Events>(*this, std::move(post))),
      rm_(make_rm(*events_)),
      settings_(store, options_.checkpoint_root, options_.checkpoint_allowed_roots),
      trials_(store),
      allocations_(store, *rm_, tokens_, rendezvous_),
      tasks_(store, allocations_, *rm_, options_.pools, options_.max_model_bytes, options_.idle_limits),
      log_policies_(store, settings_),
      ranks_(store, allocations_, settings_, log_policies_, *rm_, options_.log_limits,
             options_.heartbeat_timeout),
      searches_(store, settings_, trials_, allocations_),
      checkpoints_(store, settings_, trials_),
      scheduling_(store, allocations_, settings_, trials_, tasks_, ranks_, log_policies_, *rm_,
                  options_.pools, options_.on_scheduler_pass),
      experiments_(store, settings_, trials_, allocations_, searches_, ranks_, *rm_, options_.pools,
                   options_.max_model_bytes, options_.own_dirs),
      outcomes_(store, settings_, trials_, allocations_, searches_, checkpoints_, experiments_, log_policies_,
                options_.on_trial_restart),
      progress_(store, settings_, trials_, searches_) {
  allocations_.SetHandlers(
      [this](LiveAllocation& alloc) {
        ranks_.Forget(alloc.record.id);
        if (options_.on_allocation_ended) options_.on_allocation_ended(alloc.record.id, alloc.record.task_id);
        if (alloc.is_trial())
          outcomes_.OnAllocationEnded(alloc);
        else
          tasks_.OnAllocationEnded(alloc);
      },
      [this](const std::string& pool) { scheduling_.MarkDirty(pool); });
  searches_.OnSettled([this](int64_t experiment_id) { experiments_.FinishIfDone(experiment_id); });
  if (options_.on_experiment_state)
    experiments_.OnStateChanged([this](const ExperimentRecord& exp, RunState from) {
      options_.on_experiment_state(exp, from, settings_.Config(exp.id));
    });
  if (options_.on_trial_lines) ranks_.OnTrialLines(options_.on_trial_lines);
  // A source no live experiment warm-starts from is its own experiment's again.
  experiments_.OnEnded([this](const ExperimentRecord& exp) {
    if (!exp.warm_start_checkpoint.empty()) checkpoints_.Release(exp.warm_start_checkpoint);
  });
}

Lifecycle::~Lifecycle() = default;

Status Lifecycle::Recover(SteadyTime now) {
  const auto deadline = now + options_.heartbeat_timeout + options_.reconnect_window;
  auto pool_of = [this](int64_t experiment_id) {
    const ExperimentConfig* config = settings_.Config(experiment_id);
    return config ? config->resources.resource_pool : std::string("default");
  };
  auto processes_of = [this](const LiveAllocation& alloc) { return scheduling_.ProcessCount(alloc); };
  if (Status s = allocations_.Recover(pool_of, processes_of, deadline); !s.ok()) return s;
  // Allocations of paused experiments were asked to stop before the restart.
  for (auto& [id, alloc] : allocations_.live()) {
    if (!alloc.is_trial()) continue;
    auto exp = store_.GetExperiment(alloc.experiment_id);
    if (exp.ok() && exp->state == RunState::kPaused && !alloc.placements().empty())
      allocations_.RequestPreemption(alloc, EndCause::kPaused, now,
                                     ranks_.PreemptionTimeout(alloc.experiment_id));
  }
  // Searchers come back from their snapshots and catch up with what the
  // trials did meanwhile.
  for (int64_t offset = 0;; offset += 500) {
    auto page = store_.ListExperiments(500, offset);
    if (!page.ok()) return page.status();
    for (const auto& e : page->items)
      if (!IsTerminal(e.state)) searches_.Reconcile(e.id);
    if (page->items.size() < 500) break;
  }
  scheduling_.MarkAllDirty();
  Settle();
  return Status::Ok();
}

void Lifecycle::Settle() {
  scheduling_.RunIfDirty(std::chrono::steady_clock::now());
}

void Lifecycle::Tick(SteadyTime now) {
  rm_->Tick(now);
  ranks_.Tick(now);
  scheduling_.RunIfDirty(now);
}

}  // namespace ring
