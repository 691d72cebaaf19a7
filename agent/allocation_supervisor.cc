#include "agent/allocation_supervisor.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

namespace ring {

void AllocationSupervisor::HandleStart(proto::Start start) {
  boost::asio::post(context_.strand,
                    [this, start = std::move(start)]() mutable { OnStart(std::move(start)); });
}

void AllocationSupervisor::HandleKill(proto::Kill kill) {
  boost::asio::post(context_.strand, [this, kill = std::move(kill)] { OnKill(kill); });
}

void AllocationSupervisor::OnStart(proto::Start start) {
  Key key{start.allocation_id, start.rank};
  if (shutting_down_) {
    spdlog::warn("[agent] allocation={} rank={}: start refused, the agent is shutting down", key.first,
                 key.second);
    proto::StateChange refused;
    refused.allocation_id = key.first;
    refused.rank = key.second;
    refused.state = proto::ProcessState::kExited;
    refused.exit_code = 1;
    refused.message = "the agent is shutting down";
    context_.sink->Send(std::move(refused));
    return;
  }
  std::shared_ptr<AllocationRunner> runner;
  {
    std::lock_guard lock(mutex_);
    if (runners_.count(key)) {
      spdlog::info("[agent] allocation={} rank={}: duplicate start ignored", key.first, key.second);
      return;
    }
    runner =
        std::make_shared<AllocationRunner>(context_, std::move(start), [this, key] { OnRunnerDone(key); });
    runners_[key] = runner;
  }
  runner->Begin();
}

void AllocationSupervisor::OnKill(const proto::Kill& kill) {
  std::vector<std::shared_ptr<AllocationRunner>> targets;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, runner] : runners_)
      if (key.first == kill.allocation_id) targets.push_back(runner);
  }
  if (targets.empty()) {
    spdlog::info("[agent] allocation={}: kill for no process on this agent", kill.allocation_id);
    return;
  }
  for (auto& runner : targets) runner->Kill(std::chrono::milliseconds(kill.grace_ms), kill.reason);
}

void AllocationSupervisor::MarkAgentStopping() {
  boost::asio::post(context_.strand, [this] {
    std::lock_guard lock(mutex_);
    for (auto& [key, runner] : runners_) runner->MarkAgentStopping();
  });
}

void AllocationSupervisor::OnRunnerDone(const Key& key) {
  bool idle = false;
  {
    std::lock_guard lock(mutex_);
    runners_.erase(key);
    idle = runners_.empty();
  }
  MaybeFinishShutdown();
  if (idle && idle_ && !shutting_down_) idle_();
}

void AllocationSupervisor::Shutdown(std::chrono::milliseconds grace, std::function<void()> done) {
  boost::asio::post(context_.strand, [this, grace, done = std::move(done)]() mutable {
    shutting_down_ = true;
    shutdown_done_ = std::move(done);
    std::vector<std::shared_ptr<AllocationRunner>> all;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [key, runner] : runners_) all.push_back(runner);
    }
    spdlog::info("[agent] shutting down: terminating {} process(es), grace {} ms", all.size(), grace.count());
    for (auto& runner : all) {
      runner->MarkAgentStopping();
      runner->Kill(grace, "agent shutting down");
    }
    MaybeFinishShutdown();
  });
}

void AllocationSupervisor::MaybeFinishShutdown() {
  if (!shutting_down_ || !shutdown_done_) return;
  {
    std::lock_guard lock(mutex_);
    if (!runners_.empty()) return;
  }
  auto done = std::move(shutdown_done_);
  shutdown_done_ = nullptr;
  done();
}

std::vector<proto::RunningProcess> AllocationSupervisor::Running() const {
  std::lock_guard lock(mutex_);
  std::vector<proto::RunningProcess> out;
  for (const auto& [key, runner] : runners_) {
    auto phase = runner->phase();
    if (phase == AllocationRunner::Phase::kPreparing || phase == AllocationRunner::Phase::kRunning)
      out.push_back(proto::RunningProcess{key.first, key.second, runner->pid()});
  }
  return out;
}

size_t AllocationSupervisor::active() const {
  std::lock_guard lock(mutex_);
  return runners_.size();
}

}  // namespace ring
