#pragma once
// Runs one rank of one allocation on this agent: reports `starting`,
// fetches and unpacks the model definition on a worker thread, launches the
// entrypoint, streams its output as `log` batches, reports `exited`, and
// removes the work directory. The rank runs as the account the run-as
// policy gives its owner, in a work folder of that account's (0700). State lives on the supervisor's strand;
// output lines arrive on the launcher's thread and go through a mutex-guarded LogBatcher. Kept alive by
// shared_ptr captures until on_done has run. A rank whose start has an
// image runs in a container (RankContainer, docs/containers.md); when its
// image must be pulled, the pull is a process the runner waits for on its
// strand, as for the rank's own (no thread blocks on it), with the rank in
// its starting state, a log line saying so, and a kill ending the pull.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "agent/container_runtime.h"
#include "agent/log_batcher.h"
#include "agent/message_sink.h"
#include "agent/model_fetcher.h"
#include "agent/process_launcher.h"
#include "agent/rank_container.h"
#include "agent/rank_prefix.h"
#include "agent/run_as.h"
#include "agent/trial_environment.h"

namespace ring {

class TerminalHub;
using AgentStrand = boost::asio::strand<boost::asio::io_context::executor_type>;

// What every runner shares; the pointers outlive the runners.
struct RunnerContext {
  AgentStrand strand;                     // owns all runner state
  boost::asio::any_io_executor blocking;  // worker threads: downloads, unpacking, removing directories
  ProcessLauncher* launcher = nullptr;
  ModelFetcher* fetcher = nullptr;
  MessageSink* sink = nullptr;
  std::string master_url;       // RING_MASTER_URL
  std::string agent_id;         // RING_AGENT_ID
  std::string container_scope;  // ContainerScope: labels and names this agent's containers
  std::string ca_file;          // RING_CA_FILE when not empty (--ca-file)
  std::string python_dir;       // first on PYTHONPATH when not empty (--python-dir)
  // RING_AGENT_ADDR, read at each launch (the address may change with each
  // connection to the master); empty when unset.
  std::function<std::string()> agent_address;
  std::string work_root;           // work directories are <work_root>/<allocation_id>.r<rank>
  std::vector<proto::Slot> slots;  // this agent's slots (GPU UUIDs)
  // What trials get of the agent's own environment (AllowedAgentEnvironment).
  Environment inherited_env;
  RunAsPolicy run_as;  // who each task runs as (the agent itself when !switch_users)
  // The container runtimes found at start (empty: ranks with an image are
  // refused), and the agent's own folders, which no bind mount may reach.
  std::vector<DetectedRuntime> runtimes;
  std::vector<std::string> private_dirs;
  // Ranks ignore SIGTERM (ProcessSpec::ignore_sigterm): a Slurm job's agent.
  bool ranks_ignore_sigterm = false;
  // The terminals of ranks that run in one (Start::terminal); null: none.
  TerminalHub* terminals = nullptr;
};

// How long an image's pull may take before the rank ends saying so.
inline constexpr std::chrono::minutes kPullTimeout{30};

class AllocationRunner : public std::enable_shared_from_this<AllocationRunner> {
 public:
  enum class Phase { kPreparing, kRunning, kExited, kDone };

  // on_done runs on the strand once the runner reported `exited` and cleaned up.
  AllocationRunner(const RunnerContext& context, proto::Start start, std::function<void()> on_done);

  void Begin();  // strand
  // SIGTERM to the process group, SIGKILL after `grace`. Before launch: reports exited at once.
  void Kill(std::chrono::milliseconds grace, const std::string& reason);  // strand
  // The agent itself is stopping (a signal): the exit is reported as such.
  void MarkAgentStopping() { agent_stopping_ = true; }  // strand

  Phase phase() const { return phase_.load(); }
  int64_t pid() const { return pid_.load(); }  // 0 until launched
  const proto::Start& start() const { return start_; }
  const std::string& work_dir() const { return work_dir_; }

 private:
  Status Prepare();  // worker thread
  ProcessSpec BareSpec(const Environment& env) const;
  void OnPrepared(const Status& status);                                 // strand
  void StartPull();                                                      // strand
  void OnPulled(const ExitStatus& exit, const std::string& last_error);  // strand
  void LaunchRank();                                                     // strand
  // One line of the agent's own in the rank's log, sent at once.
  void SendAgentLine(std::string line);
  void OnLine(OutputStream stream, std::string line);                     // launcher thread
  void ArmFlushTimer();                                                   // strand
  void OnExit(const ExitStatus& status);                                  // strand
  void ReportExit(const ExitStatus& status, const std::string& message);  // strand
  void SendState(proto::ProcessState state);
  void Cleanup();           // strand
  std::string Ids() const;  // "allocation=… rank=… trial=… experiment=…"

  const RunnerContext& context_;
  const proto::Start start_;
  const NodeRanks node_ranks_;  // per-node launch: the worker ranks its lines may be filed under
  const std::string work_dir_;
  const std::unique_ptr<RankContainer> container_;  // null for a bare rank
  UnixAccount account_;                             // set by Prepare, read on the strand after it
  std::function<void()> on_done_;
  std::atomic<Phase> phase_{Phase::kPreparing};
  std::atomic<int64_t> pid_{0};
  std::string kill_reason_;                             // strand
  int64_t pull_pid_ = 0;                                // strand: the image's pull while it runs
  bool pull_timed_out_ = false;                         // strand
  std::chrono::steady_clock::time_point pull_started_;  // strand
  boost::asio::steady_timer pull_deadline_;             // strand: kPullTimeout
  bool agent_stopping_ = false;                         // strand: killed because the agent shuts down
  boost::asio::steady_timer flush_timer_;               // strand
  bool flush_timer_armed_ = false;                      // strand
  std::mutex log_mutex_;                                // guards batcher_ and orders sends of its batches
  LogBatcher batcher_;
};

// True for ids safe to use as a directory name ([A-Za-z0-9._-], not "." or "..").
bool IsSafePathComponent(const std::string& id);

}  // namespace ring
