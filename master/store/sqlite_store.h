#pragma once
// SqliteStore: the Store on one SQLite file (WAL, foreign keys, synchronous=FULL,
// busy timeout 5 s), schema brought up to date by the migrator on Open. It owns
// one connection and its prepared-statement cache, both guarded by `mu_`, so any
// thread may call it; every call runs to completion (and commits) before it
// returns. Callers keep it off the network event loop. AddMetrics calls that
// arrive while another commits wait and go in the next transaction together,
// one fsync for all of them (group commit).
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "master/store/migration.h"
#include "master/store/store.h"

namespace ring {

class SqliteDb;

class SqliteStore final : public Store {
 public:
  // Opens (creating if needed) the database at `path` and applies the missing
  // migrations. Refuses a database written by a newer binary (kConflict).
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   std::vector<Migration> migrations = BuiltinMigrations());
  ~SqliteStore() override;

  // The schema version recorded in the database.
  int schema_version() const { return schema_version_; }

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
  SqliteStore(std::unique_ptr<SqliteDb> db, int schema_version);
  // mu_ held: a trial and its task; kInvalidArgument unless an allocation's
  // task exists and its trial_id is the task's trial.
  Result<int64_t> InsertTrialLocked(const TrialRecord& t);
  Status CheckAllocationTaskLocked(const AllocationRecord& a);

  // Log lines of trials (table logs, by trial_id) or of other tasks
  // (task_logs, by task_id): one shape, two owners (sqlite_store_events.cc).
  enum class LogOwner { kTrial, kTask };
  Status InsertLogs(LogOwner owner, const std::vector<LogRecord>& lines);  // takes mu_
  Result<std::vector<LogRecord>> SelectLogs(LogOwner owner, int64_t owner_id, int rank, int64_t after_id,
                                            int64_t limit);  // takes mu_

  // Group commit of AddMetrics (sqlite_store_events.cc).
  struct MetricWrite;
  void CommitMetricGroup(const std::vector<MetricWrite*>& group);  // takes mu_
  Result<int64_t> InsertMetricsLocked(const std::vector<MetricReport>& reports, const std::string& now,
                                      bool& raised_trial);

  std::mutex mu_;  // guards db_ (the connection and its statement cache) and overrides_
  std::unique_ptr<SqliteDb> db_;
  // Experiments' resource overrides as last read or written: every GET of an
  // experiment shows them, and they change only through SetResourceOverrides.
  std::unordered_map<int64_t, ResourceOverrides> overrides_;
  const int schema_version_;
  std::mutex group_mu_;  // guards the two below
  std::condition_variable group_cv_;
  std::vector<MetricWrite*> group_waiting_;  // writes for the next commit
  bool group_committing_ = false;            // a caller is committing a group
};

}  // namespace ring
