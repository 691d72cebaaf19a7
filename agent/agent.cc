#include "agent/agent.h"

#include <signal.h>

#include <filesystem>
#include <thread>

#include <spdlog/spdlog.h>
#include <boost/asio/strand.hpp>

#include "agent/agent_state.h"
#include "agent/gpu_detector.h"
#include "agent/http_model_fetcher.h"
#include "agent/posix_process_launcher.h"
#include "agent/trial_environment.h"

namespace ring {
namespace {

// Beyond the trials' grace: time to send the last states and close.
constexpr auto kShutdownSlack = std::chrono::seconds(5);

std::vector<proto::Slot> DetectSlots(const AgentConfig& config) {
  std::vector<proto::Slot> gpus;
  if (config.detect_gpus) gpus = DetectGpus(config.nvml_library);
  return BuildSlots(gpus, config.cpu_slots, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

Agent::Agent(AgentConfig config)
    : config_(std::move(config)),
      slots_(DetectSlots(config_)),
      launcher_(std::make_unique<PosixProcessLauncher>()),
      fetcher_(std::make_unique<HttpModelFetcher>(*Url::Parse(config_.master_url), config_.download_timeout,
                                                  config_.ca_file)),
      signals_(io_, SIGTERM, SIGINT),
      shutdown_deadline_(io_) {
  MasterLink::Options link_options;
  link_options.master_url = config_.master_url;
  link_options.agent_id = config_.id;
  link_options.cluster_token = config_.token;
  link_options.credential_file = CredentialPath(config_.state_dir);
  if (Status dir = PrepareStateDir(config_.state_dir); !dir.ok())
    startup_error_ = dir;
  else if (auto credential = LoadCredential(config_.state_dir, config_.id); !credential.ok())
    startup_error_ = credential.status();
  else
    link_options.credential = credential->value_or("");
  if (startup_error_.ok() && link_options.credential.empty() && config_.token.empty())
    startup_error_ = InvalidArgument("agent " + config_.id + " is not enrolled yet (no credential in " +
                                     link_options.credential_file +
                                     "): give --token-file with the master's cluster token to enrol it");
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
    return hello;
  };
  callbacks.on_start = [this](proto::Start start) { supervisor_->HandleStart(std::move(start)); };
  callbacks.on_kill = [this](proto::Kill kill) { supervisor_->HandleKill(std::move(kill)); };
  callbacks.on_enrolled = [this](const std::string& credential) {
    return SaveCredential(config_.state_dir, config_.id, credential);
  };
  link_ = std::make_unique<MasterLink>(io_, std::move(link_options), std::move(callbacks));

  RunnerContext context{boost::asio::make_strand(io_), workers_.get_executor()};
  context.launcher = launcher_.get();
  context.fetcher = fetcher_.get();
  context.sink = link_.get();
  context.master_url = config_.master_url;
  context.agent_id = config_.id;
  context.ca_file = config_.ca_file;
  context.agent_address = [this] {
    std::lock_guard lock(address_mu_);
    return address_;
  };
  context.work_root = config_.work_dir;
  context.slots = slots_;
  context.inherited_env = CurrentEnvironment();
  supervisor_ = std::make_unique<AllocationSupervisor>(std::move(context));
}

Agent::~Agent() {
  workers_.join();
}

int Agent::Run() {
  if (!startup_error_.ok()) {
    spdlog::error("[agent] agent={} {}", config_.id, startup_error_.message());
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(config_.work_dir, ec);
  if (ec) {
    spdlog::error("[agent] agent={} cannot create --work-dir {}: {}", config_.id, config_.work_dir,
                  ec.message());
    return 1;
  }
  int gpus = 0;
  for (const auto& slot : slots_) gpus += slot.type == "cuda";
  spdlog::info("[agent] agent={} pool={} slots={} ({} GPU) work_dir={} master={}", config_.id, config_.pool,
               slots_.size(), gpus, config_.work_dir, config_.master_url);

  signals_.async_wait([this](boost::system::error_code ec, int signal) {
    if (ec) return;
    spdlog::info("[agent] agent={} received signal {}", config_.id, signal);
    BeginShutdown();
  });
  link_->Start();
  io_.run();
  workers_.join();
  spdlog::info("[agent] agent={} stopped", config_.id);
  return 0;
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
        signals_.cancel();
        io_.stop();
      });
    });
  });
}

}  // namespace ring
