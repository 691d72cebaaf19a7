#pragma once
// The agent daemon's composition root: owns the configuration, the
// io_context (run by the thread that calls Run), the worker threads for
// blocking work, the process launcher, the model fetcher, the master link and
// the allocation supervisor, declared in dependency order. SIGTERM/SIGINT
// start a clean shutdown: trial process groups get SIGTERM, SIGKILL after the
// grace period, the last states are sent, then Run returns. Each task runs
// as its owner's account (or the agent's, in single-user mode), in a cgroup
// of its own where the host offers one.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "agent/agent_config.h"
#include "agent/allocation_supervisor.h"
#include "agent/container_runtime.h"
#include "agent/master_link.h"
#include "agent/model_fetcher.h"
#include "agent/process_launcher.h"
#include "agent/run_as.h"
#include "agent/terminal_hub.h"

namespace ring {

class Agent {
 public:
  // `config` must have gone through ResolveAgentConfig, `run_as` through
  // ResolveRunAsPolicy (`run_as_notice` says why tasks run as the agent).
  Agent(AgentConfig config, RunAsPolicy run_as, std::string run_as_notice);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Runs until shut down by a signal; returns the process exit code.
  int Run();

 private:
  void BeginShutdown();
  void AskToStop();  // one-allocation mode, on Slurm's SIGTERM

  const AgentConfig config_;
  const RunAsPolicy run_as_;
  const std::string run_as_notice_;
  Status startup_error_ = Status::Ok();  // an unreadable credential, or none and no token
  std::vector<proto::Slot> slots_;
  std::vector<DetectedRuntime> runtimes_;  // found at start, reported in each hello
  boost::asio::io_context io_;
  std::unique_ptr<ProcessLauncher> launcher_;
  std::unique_ptr<ModelFetcher> fetcher_;
  boost::asio::thread_pool workers_{2};  // downloads, unpacking, removing work directories
  std::mutex address_mu_;                // guards address_
  std::string address_;                  // of the latest hello: RING_AGENT_ADDR of the trials started since
  std::unique_ptr<MasterLink> link_;
  std::unique_ptr<TerminalHub> terminals_;  // after link_ (sends through it), before supervisor_
  std::unique_ptr<AllocationSupervisor> supervisor_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer shutdown_deadline_;
  boost::asio::steady_timer job_start_deadline_;  // one-allocation mode: no start by then, leave
  bool shutting_down_ = false;                    // io_ thread
};

}  // namespace ring
