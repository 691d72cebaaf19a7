#pragma once
// MemoryStore: the in-memory fake of Store for component tests. Same semantics
// as SqliteStore (ids, ordering, constraint errors, metric de-duplication,
// increasing log ids, kNotFound), checked by the shared conformance suite
// tests/unit/store/store_conformance_test.cc. Thread-safe: every member below `mu_`
// is guarded by it; any thread may call.
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "master/store/store.h"

namespace ring {

class MemoryStore final : public Store {
 public:
  MemoryStore() = default;

  Result<int64_t> CreateExperiment(const ExperimentRecord& e, const std::string& model_tar_gz) override;
  Result<ExperimentRecord> GetExperiment(int64_t id) override;
  Result<Page<ExperimentRecord>> ListExperiments(int64_t limit, int64_t offset) override;
  Result<std::string> GetModelDefinition(int64_t experiment_id) override;
  Result<BlobPiece> ReadModelDefinition(int64_t experiment_id, int64_t offset, char* out,
                                        size_t size) override;
  Status UpdateExperiment(const ExperimentRecord& e) override;
  Status SetExperimentInfo(int64_t id, const ExperimentInfo& info) override;
  Status SetExperimentConfig(int64_t id, const std::string& config_yaml) override;
  Status MarkExperimentDeleting(int64_t id) override;
  Result<std::vector<int64_t>> ListDeletingExperiments() override;
  Status DeleteExperiment(int64_t id) override;
  Status SetTemplate(const TemplateRecord& t) override;
  Result<TemplateRecord> GetTemplate(const std::string& name) override;
  Result<std::vector<TemplateRecord>> ListTemplates() override;
  Status DeleteTemplate(const std::string& name) override;
  Result<WorkspaceRecord> CreateWorkspace(const WorkspaceRecord& w) override;
  Result<WorkspaceRecord> GetWorkspace(int64_t id) override;
  Result<std::vector<WorkspaceRecord>> ListWorkspaces() override;
  Status UpdateWorkspace(int64_t id, const WorkspaceUpdate& u) override;
  Status DeleteWorkspace(int64_t id) override;
  Status SetWorkspaceMember(int64_t id, const WorkspaceMember& m) override;
  Status RemoveWorkspaceMember(int64_t id, const std::string& username) override;
  Status BindWorkspacePool(int64_t id, const WorkspacePool& p) override;
  Status UnbindWorkspacePool(int64_t id, const std::string& pool) override;
  Result<ProjectRecord> CreateProject(const ProjectRecord& p) override;
  Result<ProjectRecord> GetProject(int64_t id) override;
  Result<std::vector<ProjectRecord>> ListProjects() override;
  Status UpdateProject(int64_t id, const ProjectUpdate& u) override;
  Status DeleteProject(int64_t id) override;
  Status MoveExperiment(int64_t experiment_id, int64_t project_id) override;
  Result<int64_t> CreateWebhook(const WebhookRecord& w) override;
  Result<WebhookRecord> GetWebhook(int64_t id) override;
  Result<std::vector<WebhookRecord>> ListWebhooks() override;
  Status DeleteWebhook(int64_t id) override;
  Result<int64_t> AddWebhookDelivery(const WebhookDelivery& d) override;
  Status UpdateWebhookDelivery(const WebhookDelivery& d) override;
  Result<WebhookDelivery> GetWebhookDelivery(int64_t id) override;
  Result<std::vector<WebhookDelivery>> ListWebhookDeliveries(int64_t webhook_id, int64_t limit) override;
  Result<std::vector<WebhookDelivery>> ListPendingWebhookDeliveries() override;
  Result<ModelRecord> CreateModel(const ModelRecord& m) override;
  Result<ModelRecord> GetModel(const std::string& name) override;
  Result<std::vector<ModelRecord>> ListModels() override;
  Status UpdateModel(const std::string& name, const ModelUpdate& u) override;
  Result<std::vector<ModelVersionRecord>> DeleteModel(const std::string& name) override;
  Result<ModelVersionRecord> AddModelVersion(const ModelVersionRecord& v) override;
  Result<ModelVersionRecord> GetModelVersion(const std::string& model, int64_t version) override;
  Result<std::vector<ModelVersionRecord>> ListModelVersions(const std::string& model) override;
  Status UpdateModelVersion(const std::string& model, int64_t version, const ModelVersionUpdate& u) override;
  Status DeleteModelVersion(const std::string& model, int64_t version) override;
  Result<std::vector<ModelVersionRecord>> ListCheckpointModelVersions(const std::string& uuid) override;
  Result<std::vector<ModelVersionRecord>> ListExperimentModelVersions(int64_t experiment_id) override;
  Result<std::vector<std::string>> ListModelVersionCheckpoints() override;
  Result<std::vector<std::string>> ListLiveWarmStarts() override;
  Result<std::vector<int64_t>> ListWarmStartedFrom(int64_t trial_id) override;

  Result<int64_t> CreateTask(const TaskRecord& t, const std::string& context_tar_gz) override;
  Result<std::vector<TaskRecord>> ListTasks(TaskKind kind, int64_t limit) override;
  Result<std::string> GetTaskContext(int64_t id) override;
  Status AddTaskLogs(const std::vector<LogRecord>& lines) override;
  Result<std::vector<LogRecord>> GetTaskLogs(int64_t task_id, int rank, int64_t after_id,
                                             int64_t limit) override;
  Result<int64_t> DeleteTaskLogs(int64_t task_id) override;
  Result<std::vector<int64_t>> ListEndedTasksWithLogs(const std::string& before) override;
  Result<TaskRecord> GetTask(int64_t id) override;
  Status EndTask(int64_t id) override;

  Result<int64_t> CreateTrial(const TrialRecord& t) override;
  Result<TrialRecord> GetTrial(int64_t id) override;
  Result<std::vector<TrialRecord>> ListTrials(int64_t experiment_id) override;
  Status UpdateTrial(const TrialRecord& t) override;

  Status CreateAllocation(const AllocationRecord& a) override;
  Result<AllocationRecord> GetAllocation(const std::string& id) override;
  Result<std::vector<AllocationRecord>> ListAllocations(int64_t trial_id) override;
  Result<std::vector<AllocationRecord>> ListTaskAllocations(int64_t task_id) override;
  Result<std::vector<AllocationRecord>> ListLiveAllocations() override;
  Status UpdateAllocation(const AllocationRecord& a) override;

  Result<int64_t> AddMetrics(const std::vector<MetricReport>& reports) override;
  Result<std::vector<MetricReport>> GetMetrics(int64_t trial_id, MetricKind kind) override;

  Result<int64_t> CountMetrics(int64_t trial_id, MetricKind kind) override;
  Result<int64_t> DeleteMetrics(int64_t trial_id, MetricKind kind,
                                const std::vector<int64_t>& batches) override;
  Result<int64_t> DeleteLogs(int64_t trial_id) override;
  Status Compact() override;
  Status AddLogs(const std::vector<LogRecord>& lines) override;
  Result<std::vector<LogRecord>> GetLogs(int64_t trial_id, int rank, int64_t after_id,
                                         int64_t limit) override;
  Result<bool> AddLogPolicyMatch(const LogPolicyMatch& m) override;
  Result<std::vector<LogPolicyMatch>> ListLogPolicyMatches(int64_t trial_id) override;

  Status AddCheckpoint(const CheckpointRecord& c) override;
  Result<CheckpointRecord> GetCheckpoint(const std::string& uuid) override;
  Result<std::vector<CheckpointRecord>> ListCheckpoints(int64_t trial_id) override;
  Status SetCheckpointState(const std::string& uuid, CheckpointState state) override;
  Status ReserveCheckpoint(const CheckpointReservation& r) override;
  Result<CheckpointReservation> GetCheckpointReservation(const std::string& uuid) override;
  Status DeleteCheckpointReservation(const std::string& uuid) override;

  Result<std::vector<int64_t>> CommitSearcherStep(const SearcherStep& step) override;
  Result<std::string> GetSearcherSnapshot(int64_t experiment_id) override;

  Status SetResourceOverrides(int64_t experiment_id, const ResourceOverrides& o) override;
  Result<ResourceOverrides> GetResourceOverrides(int64_t experiment_id) override;

  Status UpsertAgent(const AgentRecord& a) override;
  Result<std::vector<AgentRecord>> ListAgents() override;
  Status SetAgentSchedulable(const std::string& id, bool enabled, bool draining) override;
  Status PutAgentEnrolment(const AgentEnrolmentRecord& e) override;
  Result<std::vector<AgentEnrolmentRecord>> ListAgentEnrolments() override;
  Status PutSlurmJob(const SlurmJobRecord& j) override;
  Result<SlurmJobRecord> GetSlurmJob(const std::string& allocation_id) override;
  Status DeleteSlurmJob(const std::string& allocation_id) override;

  Result<int64_t> CreateUser(const UserRecord& u) override;
  Result<UserRecord> GetUser(int64_t id) override;
  Result<UserRecord> GetUserByName(const std::string& username) override;
  Result<std::vector<UserRecord>> ListUsers() override;
  Status UpdateUser(const UserRecord& u) override;
  Status SetUserUnixAccount(int64_t id, const std::optional<UserUnixAccount>& account) override;

  Status CreateSession(const SessionRecord& s) override;
  Result<SessionRecord> GetSession(const std::string& token_hash) override;
  Status DeleteSession(const std::string& token_hash) override;
  Status DeleteUserSessions(int64_t user_id) override;
  Result<int64_t> DeleteExpiredSessions(const std::string& now) override;

 private:
  TrialRecord WithLogSignal(TrialRecord t) const;  // under mu_
  // mu_ held: the versions matching `keep`, by model name and version.
  template <typename Keep>
  std::vector<ModelVersionRecord> VersionsWhere(Keep keep) const {
    std::vector<ModelVersionRecord> out;
    for (const auto& [key, v] : model_versions_)
      if (keep(v)) out.push_back(v);
    return out;
  }
  struct StoredExperiment {
    ExperimentRecord record;
    std::string model_tar_gz;
  };
  using MetricKey = std::tuple<int64_t, MetricKind, int64_t>;  // trial, kind, batches

  std::mutex mu_;
  int64_t next_experiment_id_ = 1;
  int64_t next_trial_id_ = 1;
  int64_t next_task_id_ = 1;
  std::map<int64_t, TaskRecord> tasks_;
  std::map<int64_t, std::string> task_contexts_;         // by task
  std::map<int64_t, std::vector<LogRecord>> task_logs_;  // by task, ids increasing
  int64_t next_task_log_id_ = 1;
  std::map<int64_t, int64_t> trial_of_task_;  // task id -> trial id, for trials' tasks
  int64_t next_log_id_ = 1;
  std::map<int64_t, StoredExperiment> experiments_;
  std::map<int64_t, TrialRecord> trials_;
  std::vector<AllocationRecord> allocations_;  // creation order
  std::unordered_map<std::string, size_t> allocation_index_;
  std::map<MetricKey, MetricReport> metrics_;                          // ordered by trial, kind, batches
  std::map<int64_t, std::vector<LogRecord>> logs_;                     // by trial, ids increasing
  std::map<int64_t, std::vector<LogPolicyMatch>> log_policy_matches_;  // by trial, oldest first
  std::map<std::string, AgentRecord> agents_;
  std::map<std::string, SlurmJobRecord> slurm_jobs_;           // by allocation id
  std::map<std::string, AgentEnrolmentRecord> enrolments_;     // by agent id
  std::map<std::string, CheckpointRecord> checkpoints_;        // by uuid
  std::map<std::string, CheckpointReservation> reservations_;  // by uuid
  std::map<int64_t, std::string> searcher_snapshots_;          // by experiment
  std::map<int64_t, ResourceOverrides> overrides_;             // by experiment
  int64_t next_user_id_ = 1;
  std::map<int64_t, UserRecord> users_;
  std::map<std::string, TemplateRecord> templates_;  // by name
  int64_t next_webhook_id_ = 1;
  std::map<int64_t, WebhookRecord> webhooks_;  // by id
  int64_t next_delivery_id_ = 1;
  std::map<int64_t, WebhookDelivery> deliveries_;  // by id
  int64_t next_model_id_ = 1;
  std::map<std::string, ModelRecord> models_;  // by name
  // by (model name, version)
  std::map<std::pair<std::string, int64_t>, ModelVersionRecord> model_versions_;
  std::map<std::string, SessionRecord> sessions_;  // by token hash
  // Workspaces and projects; the defaults exist from the start, as migration
  // 0024 makes them.
  static std::map<int64_t, WorkspaceRecord> DefaultWorkspaces();
  static std::map<int64_t, ProjectRecord> DefaultProjects();
  std::map<int64_t, WorkspaceRecord> workspaces_ = DefaultWorkspaces();  // by id
  std::map<int64_t, ProjectRecord> projects_ = DefaultProjects();        // by id
  int64_t next_workspace_id_ = kDefaultWorkspaceId + 1;
  int64_t next_project_id_ = kDefaultProjectId + 1;
  // mu_ held: how many experiments project `id` holds.
  int64_t ExperimentsIn(int64_t project_id) const;
};

}  // namespace ring
