#pragma once
// Drives the real lifecycle and the agents' resource manager on the test's
// own thread, the way the master's HTTP routes and agent sessions do: each
// trial call checks its allocation token first, bodies go through the REST
// layer's decoders, and every call is one lifecycle event (Lifecycle::Run,
// then its scheduling pass). Events of the resource manager run at once.
// For component tests of the lifecycle; nothing here is a fake.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "master/lifecycle/lifecycle.h"
#include "master/rm/agentrm/agent_rm.h"

namespace ring::testing {

struct DriverOptions {
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds heartbeat_timeout{10000};
  std::chrono::milliseconds reconnect_window{25000};
  std::chrono::milliseconds kill_grace{10000};
  uint64_t max_model_bytes = 64ull << 20;
  std::string checkpoint_root;
  std::vector<PoolSettings> pools = DefaultPools();
  std::vector<std::string> own_dirs;  // the master's folders (LifecycleOptions::own_dirs)
  LogLimits log_limits;
  std::function<void()> on_trial_restart;
};

class LifecycleDriver {
 public:
  LifecycleDriver(Store& store, DriverOptions options = {});
  Lifecycle& lifecycle() { return *lifecycle_; }
  AgentRm& agents() { return *agents_; }
  // As the master does at start.
  Status Recover(SteadyTime now) { return lifecycle_->Recover(now); }

  // Users.
  Result<int64_t> CreateExperiment(const std::string& config_yaml, const std::string& model_tar_gz,
                                   bool activate, const std::string& owner);
  Status Kill(int64_t experiment_id);
  Status Pause(int64_t experiment_id);
  Status Activate(int64_t experiment_id);
  Status SetResources(int64_t experiment_id, const nlohmann::json& patch);
  EffectiveResources Resources(int64_t experiment_id);
  Status DisableAgent(const std::string& agent_id, bool drain);
  Status EnableAgent(const std::string& agent_id);
  nlohmann::json AgentsJson();
  nlohmann::json JobsJson();
  std::optional<int64_t> TrialOperation(int64_t experiment_id, int64_t trial_id);

  // Trials, each authorised by its allocation token.
  Result<int64_t> ReportMetrics(const std::string& allocation_id, const std::string& token,
                                const nlohmann::json& body);
  Result<std::string> ModelDefinition(const std::string& allocation_id, const std::string& token);
  // POST /allocations/{id}/checkpoints/prepare: a new checkpoint's uuid and storage.
  Result<CheckpointReservation> PrepareCheckpoint(const std::string& allocation_id, const std::string& token);
  Result<bool> RegisterCheckpoint(const std::string& allocation_id, const std::string& token,
                                  const nlohmann::json& body);
  Result<CheckpointRecord> TrialCheckpoint(const std::string& allocation_id, const std::string& token,
                                           const std::string& uuid);
  Result<bool> PreemptionRequested(const std::string& allocation_id, const std::string& token);
  Status AcknowledgePreemption(const std::string& allocation_id, const std::string& token);
  Result<nlohmann::json> SearcherOperation(const std::string& allocation_id, const std::string& token,
                                           std::optional<int64_t> after);
  Result<bool> CompleteSearcherOperation(const std::string& allocation_id, const std::string& token,
                                         const nlohmann::json& body);
  Status ReportInvalidHparams(const std::string& allocation_id, const std::string& token,
                              const nlohmann::json& body);
  Status RendezvousSet(const std::string& allocation_id, const std::string& token, const std::string& key,
                       std::string value);
  Result<RendezvousStore::Lookup> RendezvousGet(const std::string& allocation_id, const std::string& token,
                                                const std::string& key,
                                                RendezvousStore::Waker wake = nullptr);
  Result<RendezvousStore::Check> RendezvousCheck(const std::string& allocation_id, const std::string& token,
                                                 const std::vector<std::string>& keys);

  // Agents' connections.
  void OnAgentHello(const proto::Hello& hello, std::shared_ptr<AgentChannel> channel, SteadyTime now);
  void OnAgentMessage(const std::string& agent_id, const proto::Message& message, SteadyTime now);
  void OnAgentDisconnected(const std::string& agent_id, const AgentChannel* channel, SteadyTime now);
  void Tick(SteadyTime now);

 private:
  Store& store_;
  AgentRm* agents_ = nullptr;
  std::unique_ptr<Lifecycle> lifecycle_;
};

}  // namespace ring::testing
