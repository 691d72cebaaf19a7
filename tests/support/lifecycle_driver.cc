#include "tests/support/lifecycle_driver.h"

#include "master/api/commands.h"
#include "master/api/json_views.h"

namespace ring::testing {

LifecycleDriver::LifecycleDriver(Store& store, DriverOptions o) : store_(store) {
  AgentRmOptions agent_options{o.heartbeat_interval, o.heartbeat_timeout, o.reconnect_window, o.kill_grace};
  LifecycleOptions options;
  options.heartbeat_timeout = o.heartbeat_timeout;
  options.reconnect_window = o.reconnect_window;
  options.max_model_bytes = o.max_model_bytes;
  options.checkpoint_root = o.checkpoint_root;
  options.pools = o.pools;
  options.own_dirs = o.own_dirs;
  options.log_limits = o.log_limits;
  options.on_trial_restart = o.on_trial_restart;
  lifecycle_ = std::make_unique<Lifecycle>(store, options, [this, agent_options, &store](RmEvents& events) {
    auto rm = std::make_unique<AgentRm>(store, agent_options, events);
    agents_ = rm.get();
    return rm;
  });
}

Result<int64_t> LifecycleDriver::CreateExperiment(const std::string& config_yaml,
                                                  const std::string& model_tar_gz, bool activate,
                                                  const std::string& owner) {
  return lifecycle_->Run([&](Lifecycle& l) {
    return l.experiments().Create(config_yaml, model_tar_gz, activate, Submitter{owner});
  });
}

Status LifecycleDriver::Kill(int64_t id) {
  return lifecycle_->Run([&](Lifecycle& l) { return l.experiments().Kill(id); });
}

Status LifecycleDriver::Pause(int64_t id) {
  return lifecycle_->Run(
      [&](Lifecycle& l) { return l.experiments().Pause(id, std::chrono::steady_clock::now()); });
}

Status LifecycleDriver::Activate(int64_t id) {
  return lifecycle_->Run([&](Lifecycle& l) { return l.experiments().Activate(id); });
}

Status LifecycleDriver::SetResources(int64_t id, const nlohmann::json& body) {
  auto patch = DecodeResourcesPatch(body);
  if (!patch.ok()) return patch.status();
  return lifecycle_->Run([&](Lifecycle& l) {
    Status s = l.settings().SetResources(id, *patch, /*by_admin=*/true);
    if (s.ok()) l.scheduling().MarkDirty(l.settings().Resources(id).pool);
    return s;
  });
}

EffectiveResources LifecycleDriver::Resources(int64_t id) {
  return lifecycle_->Run([&](Lifecycle& l) { return l.settings().Resources(id); });
}

Status LifecycleDriver::DisableAgent(const std::string& agent_id, bool drain) {
  return lifecycle_->Run([&](Lifecycle&) { return agents_->Disable(agent_id, drain); });
}

Status LifecycleDriver::EnableAgent(const std::string& agent_id) {
  return lifecycle_->Run([&](Lifecycle&) { return agents_->Enable(agent_id); });
}

nlohmann::json LifecycleDriver::AgentsJson() {
  return agents_->AgentsJson();
}

nlohmann::json LifecycleDriver::JobsJson() {
  return lifecycle_->Run([](Lifecycle& l) { return ring::JobsJson(l.scheduling().Jobs()); });
}

std::optional<int64_t> LifecycleDriver::TrialOperation(int64_t experiment_id, int64_t trial_id) {
  return lifecycle_->Run([&](Lifecycle& l) { return l.searches().TrialOperation(experiment_id, trial_id); });
}

Result<int64_t> LifecycleDriver::ReportMetrics(const std::string& allocation_id, const std::string& token,
                                               const nlohmann::json& body) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  auto reports = DecodeReports(body, holder->trial_id, allocation_id);
  if (!reports.ok()) return reports.status();
  auto stored = store_.AddMetrics(*reports);
  if (!stored.ok()) return stored.status();
  Status s = lifecycle_->Run(
      [&](Lifecycle& l) { return l.progress().Record(holder->trial_id, holder->experiment_id, *reports); });
  if (!s.ok()) return s;
  return stored;
}

Result<std::string> LifecycleDriver::ModelDefinition(const std::string& allocation_id,
                                                     const std::string& token) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return store_.GetModelDefinition(holder->experiment_id);
}

Result<CheckpointReservation> LifecycleDriver::PrepareCheckpoint(const std::string& allocation_id,
                                                                 const std::string& token) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return lifecycle_->Run([&](Lifecycle& l) -> Result<CheckpointReservation> {
    auto alloc = l.allocations().Live(allocation_id);
    if (!alloc.ok()) return alloc.status();
    return l.checkpoints().Prepare((*alloc)->experiment_id, (*alloc)->trial_id(), allocation_id);
  });
}

Result<bool> LifecycleDriver::RegisterCheckpoint(const std::string& allocation_id, const std::string& token,
                                                 const nlohmann::json& body) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  auto checkpoint = DecodeCheckpoint(body);
  if (!checkpoint.ok()) return checkpoint.status();
  return lifecycle_->Run([&](Lifecycle& l) -> Result<bool> {
    auto alloc = l.allocations().Live(allocation_id);
    if (!alloc.ok()) return alloc.status();
    checkpoint->trial_id = (*alloc)->trial_id();
    checkpoint->allocation_id = allocation_id;
    return l.checkpoints().Register((*alloc)->experiment_id, *checkpoint);
  });
}

Result<CheckpointRecord> LifecycleDriver::TrialCheckpoint(const std::string& allocation_id,
                                                          const std::string& token, const std::string& uuid) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return lifecycle_->checkpoints().OfTrial(holder->trial_id, uuid);
}

Result<bool> LifecycleDriver::PreemptionRequested(const std::string& allocation_id,
                                                  const std::string& token) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return lifecycle_->Run([&](Lifecycle& l) -> Result<bool> {
    auto alloc = l.allocations().Live(allocation_id);
    if (!alloc.ok()) return alloc.status();
    return (*alloc)->preemption.requested();
  });
}

Status LifecycleDriver::AcknowledgePreemption(const std::string& allocation_id, const std::string& token) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return lifecycle_->Run([&](Lifecycle& l) -> Status {
    auto alloc = l.allocations().Live(allocation_id);
    if (!alloc.ok()) return alloc.status();
    if (!(*alloc)->preemption.requested())
      return Conflict("allocation " + allocation_id + " was not asked to stop");
    (*alloc)->preemption.Acknowledge();
    return Status::Ok();
  });
}

Result<nlohmann::json> LifecycleDriver::SearcherOperation(const std::string& allocation_id,
                                                          const std::string& token,
                                                          std::optional<int64_t> after) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return lifecycle_->Run([&](Lifecycle& l) -> Result<nlohmann::json> {
    auto alloc = l.allocations().Live(allocation_id);
    if (!alloc.ok()) return alloc.status();
    auto op = l.searches().Operation(**alloc, after);
    if (!op.ok()) return op.status();
    return nlohmann::json{
        {"operation", op->length ? nlohmann::json{{"length", *op->length}} : nlohmann::json()},
        {"done", op->done}};
  });
}

Result<bool> LifecycleDriver::CompleteSearcherOperation(const std::string& allocation_id,
                                                        const std::string& token,
                                                        const nlohmann::json& body) {
  auto done = DecodeCompletion(body);
  if (!done.ok()) return done.status();
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return lifecycle_->Run([&](Lifecycle& l) -> Result<bool> {
    auto alloc = l.allocations().Live(allocation_id);
    if (!alloc.ok()) return alloc.status();
    return l.searches().Complete(**alloc, *done);
  });
}

Status LifecycleDriver::ReportInvalidHparams(const std::string& allocation_id, const std::string& token,
                                             const nlohmann::json& body) {
  auto message = DecodeInvalidHparams(body);
  if (!message.ok()) return message.status();
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return lifecycle_->Run([&](Lifecycle& l) -> Status {
    auto alloc = l.allocations().Live(allocation_id);
    if (!alloc.ok()) return alloc.status();
    (*alloc)->invalid_hparams = *message;
    return Status::Ok();
  });
}

Status LifecycleDriver::RendezvousSet(const std::string& allocation_id, const std::string& token,
                                      const std::string& key, std::string value) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return lifecycle_->rendezvous().Set(allocation_id, key, std::move(value));
}

Result<RendezvousStore::Lookup> LifecycleDriver::RendezvousGet(const std::string& allocation_id,
                                                               const std::string& token,
                                                               const std::string& key,
                                                               RendezvousStore::Waker wake) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return lifecycle_->rendezvous().Get(allocation_id, key, std::move(wake));
}

Result<RendezvousStore::Check> LifecycleDriver::RendezvousCheck(const std::string& allocation_id,
                                                                const std::string& token,
                                                                const std::vector<std::string>& keys) {
  auto holder = lifecycle_->tokens().Authorize(allocation_id, token);
  if (!holder.ok()) return holder.status();
  return lifecycle_->rendezvous().CheckKeys(allocation_id, keys);
}

void LifecycleDriver::OnAgentHello(const proto::Hello& hello, std::shared_ptr<AgentChannel> channel,
                                   SteadyTime now) {
  lifecycle_->Run([&](Lifecycle&) { agents_->OnHello(hello.agent_id, hello, std::move(channel), now); });
}

void LifecycleDriver::OnAgentMessage(const std::string& agent_id, const proto::Message& message,
                                     SteadyTime now) {
  agents_->OnMessage(agent_id, message, now);
}

void LifecycleDriver::OnAgentDisconnected(const std::string& agent_id, const AgentChannel* channel,
                                          SteadyTime now) {
  lifecycle_->Run([&](Lifecycle&) { agents_->OnDisconnected(agent_id, channel, now); });
}

void LifecycleDriver::Tick(SteadyTime now) {
  lifecycle_->Tick(now);
}

}  // namespace ring::testing
