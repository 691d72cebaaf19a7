#include "agent/agent.h"

#include <signal.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>
#include <boost/asio/strand.hpp>

#include "agent/agent_state.h"
#include "agent/gpu_detector.h"
#include "agent/http_model_fetcher.h"
#include "agent/posix_process_launcher.h"
#include "agent/run_command.h"
#include "agent/trial_environment.h"
#include "agent/work_folder.h"

namespace ring {
namespace {

// Beyond the trials' grace: time to send the last states and close.
constexpr auto kShutdownSlack = std::chrono::seconds(5);

ProcessContainment DetectContainment(const AgentConfig& config) {
  bool is_auto = true;
  ContainmentKind kind = ContainmentKind::kProcessGroup;
  ParseContainment(config.containment, is_auto, kind);
  std::vector<ContainmentKind> wanted = {ContainmentKind::kCgroup2, ContainmentKind::kFreezer};
  if (!is_auto) wanted = {kind};
  std::string why;
  auto containment = ProcessContainment::Detect(config.id, wanted, why);
  if (containment.kind() == ContainmentKind::kProcessGroup) {
    spdlog::warn(
        "[agent] agent={} tasks are contained by process groups only: a process that leaves its group "
        "(setsid, double fork) can outlive its task ({})",
        config.id, why.empty() ? "containment: process_group" : why);
  } else {
    spdlog::info("[agent] agent={} each task runs in a {} cgroup below {}", config.id,
                 ToString(containment.kind()), containment.root());
  }
  return containment;
}

std::vector<proto::Slot> DetectSlots(const AgentConfig& config) {
  std::vector<proto::Slot> gpus;
  if (config.detect_gpus) gpus = DetectGpus(config.nvml_library);
  return BuildSlots(gpus, config.cpu_slots, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

Agent::Agent(AgentConfig config, RunAsPolicy run_as, std::string run_as_notice)
    : config_(std::move(config)),
      run_as_(std::move(run_as)),
      run_as_notice_(std::move(run_as_notice)),
      slots_(DetectSlots(config_)),
      launcher_(std::make_unique<PosixProcessLauncher>(DetectContainment(config_))),
      fetcher_(std::make_unique<HttpModelFetcher>(*Url::Parse(config_.master_url), config_.download_timeout,
                                                  config_.ca_file)),
      signals_(io_, SIGTERM, SIGINT),
      shutdown_deadline_(io_),
      job_start_deadline_(io_) {
  MasterLink::Options link_options;
  link_options.master_url = config_.master_url;
  link_options.agent_id = config_.id;
  link_options.cluster_token = config_.token;
  link_options.credential_file = CredentialPath(config_.state_dir);
  if (!config_.slurm_allocation.empty())
    link_options.credential = config_.job_credential;  // never enrols, keeps no state
  else if (Status dir = PrepareStateDir(config_.state_dir); !dir.ok())
    startup_error_ = dir;
  else if (auto credential = LoadCredential(config_.state_dir, config_.id); !credential.ok())
    startup_error_ = credential.status();
  else
    link_options.credential = credential->value_or("");
  if (startup_error_.ok() && link_options.credential.empty() && config_.token.empty())
    startup_error_ = InvalidArgument("agent " + config_.id + " is not enrolled yet (no credential in " +
                                     link_options.credential_file +
                                     "): give --token-file with the master's cluster token to enrol it");
  {
    std::vector<std::string> notes;
    const Environment own = AllowedAgentEnvironment(CurrentEnvironment());
    runtimes_ = DetectContainerRuntimes(*launcher_, config_.container_runtimes, own.at("PATH"), notes);
    // A new agent process supervises no rank yet: containers an earlier one
    // of this id left (killed with -9) have no one to stop them.
    for (const auto& runtime : runtimes_) {
      if (!HasDetachedContainers(runtime)) continue;
      auto listed = RunCommand(
          *launcher_, ListAgentContainersCommand(runtime, ContainerScope(config_.id, config_.work_dir)),
          ToEnvp(own), std::chrono::seconds(30));
      if (!listed.ok() || !listed->ok()) continue;
      std::stringstream ids(listed->out);
      for (std::string id; std::getline(ids, id);) {
        if (id.empty()) continue;
        spdlog::warn("[agent] agent={} removing container {} left by an earlier run of this agent",
                     config_.id, id);
        (void)RunCommand(*launcher_, RemoveCommand(runtime, id), ToEnvp(own), std::chrono::seconds(30));
      }
    }
    for (const auto& note : notes)
      spdlog::info("[agent] agent={} container runtime left out: {}", config_.id, note);
  }
  link_options.ca_file = config_.ca_file;
  link_options.max_queued_log_bytes = config_.max_queued_log_bytes;
  MasterLink::Callbacks callbacks;
  callbacks.make_hello = [this](const std::string& local_address) {
    proto::Hello hello;
    hello.agent_id = config_.id;
    hello.pool = config_.pool;
    hello.address = config_.address.empty() ? local_address : config_.address;
    {
      std::lock_guard lock(address_mu_);
      address_ = hello.address;
    }
    hello.version = AgentVersion();
    hello.slots = slots_;
    hello.running = supervisor_->Running();
    hello.runs_as_owner = run_as_.switch_users;
    for (const auto& r : runtimes_) hello.container_runtimes.push_back(r.Info());
    return hello;
  };
  callbacks.on_start = [this](proto::Start start) {
    if (!config_.slurm_allocation.empty() && start.allocation_id != config_.slurm_allocation) {
      spdlog::warn("[agent] agent={} one-allocation mode: start of allocation {} ignored", config_.id,
                   start.allocation_id);
      return;
    }
    if (!config_.slurm_allocation.empty()) boost::asio::post(io_, [this] { job_start_deadline_.cancel(); });
    supervisor_->HandleStart(std::move(start));
  };
  callbacks.on_kill = [this](proto::Kill kill) { supervisor_->HandleKill(std::move(kill)); };
  callbacks.on_terminal = [this](proto::Message message) { terminals_->Handle(message); };
  callbacks.on_enrolled = [this](const std::string& credential) {
    return SaveCredential(config_.state_dir, config_.id, credential);
  };
  link_ = std::make_unique<MasterLink>(io_, std::move(link_options), std::move(callbacks));
  terminals_ = std::make_unique<TerminalHub>(*launcher_, *link_);

  RunnerContext context{boost::asio::make_strand(io_), workers_.get_executor()};
  context.launcher = launcher_.get();
  context.fetcher = fetcher_.get();
  context.sink = link_.get();
  context.master_url = config_.master_url;
  context.agent_id = config_.id;
  context.container_scope = ContainerScope(config_.id, config_.work_dir);
  context.ca_file = config_.ca_file;
  context.python_dir = config_.python_dir;
  // Slurm's SIGTERM is a notice, passed on as a preemption request by the
  // master (AskToStop): the ranks must outlive it to checkpoint.
  context.ranks_ignore_sigterm = !config_.slurm_allocation.empty();
  context.agent_address = [this] {
    std::lock_guard lock(address_mu_);
    return address_;
  };
  context.work_root = config_.work_dir;
  context.slots = slots_;
  context.inherited_env = AllowedAgentEnvironment(CurrentEnvironment());
  context.run_as = run_as_;
  context.runtimes = runtimes_;
  context.private_dirs = {config_.work_dir, config_.state_dir};
  context.terminals = terminals_.get();
  supervisor_ = std::make_unique<AllocationSupervisor>(std::move(context));
  if (!config_.slurm_allocation.empty())
    // Its ranks are done: so is the agent (and with it the Slurm job step).
    supervisor_->OnIdle([this] { boost::asio::post(io_, [this] { BeginShutdown(); }); });
}

Agent::~Agent() {
  workers_.join();
}

int Agent::Run() {
  if (!startup_error_.ok()) {
    spdlog::error("[agent] agent={} {}", config_.id, startup_error_.message());
    return 2;
  }
  if (Status s = PrepareWorkRoot(config_.work_dir, run_as_.switch_users); !s.ok()) {
    spdlog::error("[agent] agent={} {}", config_.id, s.message());
    return 2;
  }
  if (run_as_.switch_users) {
    spdlog::info(
        "[agent] agent={} runs each task as its owner's Unix account; tasks of users with no "
        "linked account run as {} (uid {})",
        config_.id, run_as_.unlinked.user, run_as_.unlinked.uid);
  } else {
    spdlog::warn(
        "[agent] agent={} single-user mode: every task runs as the agent's own account {} (uid {}), "
        "so tasks can read and change each other's files and the agent's ({})",
        config_.id, run_as_.agent.user, run_as_.agent.uid, run_as_notice_);
  }
  int gpus = 0;
  for (const auto& slot : slots_) gpus += slot.type == "cuda";
  spdlog::info("[agent] agent={} pool={} slots={} ({} GPU) work_dir={} master={}", config_.id, config_.pool,
               slots_.size(), gpus, config_.work_dir, config_.master_url);
  std::string runtimes;
  for (const auto& r : runtimes_)
    runtimes += (runtimes.empty() ? "" : ", ") + std::string(ToString(r.kind)) + " " + r.version +
                (r.rootless ? " (rootless)" : "");
  spdlog::info("[agent] agent={} container runtimes: {}", config_.id, runtimes.empty() ? "none" : runtimes);
  if (config_.python_dir.empty()) {
    spdlog::warn(
        "[agent] agent={} no trial runtime Python folder (--python-dir): trials' `import determined` "
        "and `import ringtrial` find only what their interpreter has installed",
        config_.id);
  } else {
    spdlog::info("[agent] agent={} trials' PYTHONPATH starts with {}", config_.id, config_.python_dir);
  }

  signals_.async_wait([this](boost::system::error_code ec, int signal) {
    if (ec) return;
    spdlog::info("[agent] agent={} received signal {}", config_.id, signal);
    if (!config_.slurm_allocation.empty() && signal == SIGTERM && supervisor_->active() > 0) {
      AskToStop();
      return;
    }
    BeginShutdown();
  });
  if (!config_.slurm_allocation.empty()) {
    job_start_deadline_.expires_after(config_.job_start_timeout);
    job_start_deadline_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      spdlog::error("[agent] agent={} no start for allocation {} within {} ms: leaving", config_.id,
                    config_.slurm_allocation, config_.job_start_timeout.count());
      BeginShutdown();
    });
  }
  link_->Start();
  io_.run();
  workers_.join();
  spdlog::info("[agent] agent={} stopped", config_.id);
  return 0;
}

// One-allocation mode: Slurm is stopping the job (scancel, preemption, time
// limit) and will SIGKILL it after its grace. The master is asked to stop the
// allocation as a preemption, so the ranks checkpoint and exit; the agent
// leaves when they have (OnIdle), on a second signal, or after the shutdown
// grace.
void Agent::AskToStop() {
  spdlog::info("[agent] agent={} Slurm is stopping the job: asking the master to preempt allocation {}",
               config_.id, config_.slurm_allocation);
  link_->Send(proto::Stopping{config_.slurm_allocation, "SIGTERM from Slurm"});
  supervisor_->MarkAgentStopping();
  signals_.async_wait([this](boost::system::error_code ec, int) {
    if (!ec) BeginShutdown();
  });
  job_start_deadline_.expires_after(config_.shutdown_grace);
  job_start_deadline_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    spdlog::warn("[agent] agent={} the ranks did not stop within {} ms: stopping them", config_.id,
                 config_.shutdown_grace.count());
    BeginShutdown();
  });
}

void Agent::BeginShutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  // A second signal stops at once (the launcher's destructor SIGKILLs what is left).
  signals_.async_wait([this](boost::system::error_code ec, int) {
    if (ec) return;
    spdlog::warn("[agent] agent={} second signal: stopping now", config_.id);
    io_.stop();
  });
  shutdown_deadline_.expires_after(config_.shutdown_grace + kShutdownSlack);
  shutdown_deadline_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    spdlog::warn("[agent] agent={} shutdown took too long: stopping now", config_.id);
    io_.stop();
  });
  supervisor_->Shutdown(config_.shutdown_grace, [this] {
    link_->Stop([this] {
      boost::asio::post(io_, [this] {
        shutdown_deadline_.cancel();
        job_start_deadline_.cancel();
        signals_.cancel();
        io_.stop();
      });
    });
  });
}

}  // namespace ring
