#pragma once
// Owns the AllocationRunners of this agent, one per (allocation, rank):
// routes `start` and `kill` from the master to them, ignores duplicate
// starts, lists the processes still supervised (for hello after a
// reconnect), and terminates everything on shutdown. Runs on the strand in
// its RunnerContext; the public methods may be called from any thread.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "agent/allocation_runner.h"

namespace ring {

class AllocationSupervisor {
 public:
  explicit AllocationSupervisor(RunnerContext context) : context_(std::move(context)) {}
  AllocationSupervisor(const AllocationSupervisor&) = delete;
  AllocationSupervisor& operator=(const AllocationSupervisor&) = delete;

  void HandleStart(proto::Start start);
  void HandleKill(proto::Kill kill);
  // Refuses further starts, terminates every process with `grace`, and runs
  // `done` on the strand once every runner has reported and cleaned up.
  void Shutdown(std::chrono::milliseconds grace, std::function<void()> done);

  // The agent is being stopped from outside (Slurm's SIGTERM reaches the
  // ranks too): every exit from now on is reported as agent_stopping.
  void MarkAgentStopping();
  // Runs `idle` on the strand each time the last runner is done (call before any start).
  void OnIdle(std::function<void()> idle) { idle_ = std::move(idle); }

  // Processes not yet reported as exited (pid 0 while still preparing).
  std::vector<proto::RunningProcess> Running() const;
  // Runners not yet done (including those cleaning up).
  size_t active() const;

 private:
  using Key = std::pair<std::string, int>;  // (allocation id, rank)
  void OnStart(proto::Start start);         // strand
  void OnKill(const proto::Kill& kill);     // strand
  void OnRunnerDone(const Key& key);        // strand
  void MaybeFinishShutdown();               // strand

  RunnerContext context_;
  mutable std::mutex mutex_;  // guards runners_: written on the strand, read by Running()
  std::map<Key, std::shared_ptr<AllocationRunner>> runners_;
  bool shutting_down_ = false;           // strand
  std::function<void()> shutdown_done_;  // strand
  std::function<void()> idle_;           // set before the first start
};

}  // namespace ring
