#pragma once
// The master's durable state. One interface, two implementations: SqliteStore
// (WAL, foreign keys, prepared statements, migrations) and MemoryStore (the
// fake for component tests). Both pass tests/unit/store/store_conformance_test.cc.
// Implementations are thread-safe (one internal mutex each).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/store/agent_records.h"
#include "master/store/checkpoint_records.h"
#include "master/store/registry_records.h"
#include "master/store/run_records.h"
#include "master/store/user_records.h"
#include "master/store/webhook_records.h"
#include "master/store/workspace_records.h"

namespace ring {

// What one piece read of a stored blob gave: `bytes` copied, of `total`.
struct BlobPiece {
  size_t bytes = 0;
  int64_t total = 0;
};

template <typename T>
struct Page {
  std::vector<T> items;
  int64_t total = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // Change with every write to experiments or trials (and to workspaces and
  // projects, whose names and members the experiment lists depend on), and
  // to metrics (they may also change without one), so a reader can keep a
  // view until they do.
  uint64_t ExperimentsGeneration() const { return experiments_generation_.load(std::memory_order_acquire); }
  uint64_t MetricsGeneration() const { return metrics_generation_.load(std::memory_order_acquire); }

  // Experiments. The model definition (tar.gz) is stored with the experiment.
  virtual Result<int64_t> CreateExperiment(const ExperimentRecord& e, const std::string& model_tar_gz) = 0;
  virtual Result<ExperimentRecord> GetExperiment(int64_t id) = 0;  // kNotFound
  virtual Result<Page<ExperimentRecord>> ListExperiments(int64_t limit, int64_t offset) = 0;
  virtual Result<std::string> GetModelDefinition(int64_t experiment_id) = 0;
  // Up to `size` bytes of the model definition from `offset` into `out`, so
  // that it is sent in pieces (kNotFound once the experiment is gone).
  virtual Result<BlobPiece> ReadModelDefinition(int64_t experiment_id, int64_t offset, char* out,
                                                size_t size) = 0;
  // Writes every mutable field of `e` (state, archived, progress, best_*, ended_at).
  virtual Status UpdateExperiment(const ExperimentRecord& e) = 0;
  // Sets the name, description and labels `info` holds (kNotFound).
  virtual Status SetExperimentInfo(int64_t id, const ExperimentInfo& info) = 0;
  // Replaces the stored config text (a retention change rewrites it; kNotFound).
  virtual Status SetExperimentConfig(int64_t id, const std::string& config_yaml) = 0;
  // Deletion: MarkExperimentDeleting records that the experiment is to go
  // (kNotFound; again is fine); ListDeletingExperiments says which are;
  // DeleteExperiment removes it and every row of its trials (their tasks,
  // allocations, metrics, logs, checkpoints, reservations, log policy
  // matches, Slurm jobs, the searcher's snapshot and resource overrides) in
  // one transaction. kNotFound when it is gone already; kConflict while one
  // of its checkpoints is another experiment's warm start or a model version.
  virtual Status MarkExperimentDeleting(int64_t id) = 0;
  virtual Result<std::vector<int64_t>> ListDeletingExperiments() = 0;
  virtual Status DeleteExperiment(int64_t id) = 0;
  // The checkpoints that experiments which have not ended warm-start from,
  // each once (garbage collection keeps them).
  virtual Result<std::vector<std::string>> ListLiveWarmStarts() = 0;
  // The experiments (not being deleted) that warm-start from one of the
  // trial's checkpoints, by id: where the trial was continued.
  virtual Result<std::vector<int64_t>> ListWarmStartedFrom(int64_t trial_id) = 0;

  // Tasks. CreateTask is for the kinds other than trials (kInvalidArgument
  // for kTrial); CreateTrial makes a trial's task. EndTask sets ended_at of
  // such a task once (a trial's task ends with its trial).
  // `context_tar_gz` is the task's context folder ("" for none).
  virtual Result<int64_t> CreateTask(const TaskRecord& t, const std::string& context_tar_gz) = 0;
  virtual Result<TaskRecord> GetTask(int64_t id) = 0;  // kNotFound
  virtual Status EndTask(int64_t id) = 0;              // kNotFound
  // Tasks of `kind` (not kTrial), newest first, at most `limit`.
  virtual Result<std::vector<TaskRecord>> ListTasks(TaskKind kind, int64_t limit) = 0;
  // The context folder a task was created with; "" when it has none.
  virtual Result<std::string> GetTaskContext(int64_t id) = 0;  // kNotFound

  // Trials. CreateTrial also creates the trial's task.
  virtual Result<int64_t> CreateTrial(const TrialRecord& t) = 0;
  virtual Result<TrialRecord> GetTrial(int64_t id) = 0;
  virtual Result<std::vector<TrialRecord>> ListTrials(int64_t experiment_id) = 0;
  // total_batches never goes down: a lower value than the stored one (read
  // before AddMetrics raised it) keeps the stored one.
  virtual Status UpdateTrial(const TrialRecord& t) = 0;

  // Allocations.
  // kConflict if the id exists; kInvalidArgument when the task does not, or
  // when trial_id is not the task's trial.
  virtual Status CreateAllocation(const AllocationRecord& a) = 0;
  virtual Result<AllocationRecord> GetAllocation(const std::string& id) = 0;
  virtual Result<std::vector<AllocationRecord>> ListAllocations(int64_t trial_id) = 0;
  virtual Result<std::vector<AllocationRecord>> ListTaskAllocations(int64_t task_id) = 0;
  // Allocations not yet TERMINATED, for recovery.
  virtual Result<std::vector<AllocationRecord>> ListLiveAllocations() = 0;
  virtual Status UpdateAllocation(const AllocationRecord& a) = 0;

  // Metrics. A report whose (trial, kind, batches) is already stored is ignored,
  // so retried reports are idempotent. Returns how many were newly stored.
  // All of them or none; in the same transaction the trial's total_batches
  // rises to its largest training report. Calls from several threads at once
  // may share one commit (SqliteStore's group commit), each with its own result.
  virtual Result<int64_t> AddMetrics(const std::vector<MetricReport>& reports) = 0;
  virtual Result<std::vector<MetricReport>> GetMetrics(int64_t trial_id, MetricKind kind) = 0;

  // Retention (master/maintenance/retention.h): how many reports of a kind a trial
  // has; deleting a trial's reports at the given batches (returns how many).
  virtual Result<int64_t> CountMetrics(int64_t trial_id, MetricKind kind) = 0;
  virtual Result<int64_t> DeleteMetrics(int64_t trial_id, MetricKind kind,
                                        const std::vector<int64_t>& batches) = 0;

  // Logs. Ids are assigned by the store and increase.
  virtual Status AddLogs(const std::vector<LogRecord>& lines) = 0;
  // Lines with id > after_id, oldest first, at most `limit`; rank < 0 means all ranks.
  virtual Result<std::vector<LogRecord>> GetLogs(int64_t trial_id, int rank, int64_t after_id,
                                                 int64_t limit) = 0;

  // Deletes every log line of a trial; returns how many.
  virtual Result<int64_t> DeleteLogs(int64_t trial_id) = 0;
  // The same for tasks that are not trials, by LogRecord::task_id (their
  // lines are kept apart from trials' lines, with their own ids).
  virtual Status AddTaskLogs(const std::vector<LogRecord>& lines) = 0;
  virtual Result<std::vector<LogRecord>> GetTaskLogs(int64_t task_id, int rank, int64_t after_id,
                                                     int64_t limit) = 0;
  virtual Result<int64_t> DeleteTaskLogs(int64_t task_id) = 0;
  // Tasks that are not trials, ended before `before` (RFC 3339), whose logs
  // are still kept: what log retention deletes.
  virtual Result<std::vector<int64_t>> ListEndedTasksWithLogs(const std::string& before) = 0;

  // Log policy matches. A match whose (trial, policy, node) is already
  // stored is ignored (returns false); a new one returns true.
  virtual Result<bool> AddLogPolicyMatch(const LogPolicyMatch& m) = 0;
  // A trial's matches, oldest first.
  virtual Result<std::vector<LogPolicyMatch>> ListLogPolicyMatches(int64_t trial_id) = 0;
  // Gives the pages that deletions freed back to the file system and
  // truncates the write-ahead log (a no-op for stores without files).
  virtual Status Compact() = 0;

  // Checkpoints. Registering the same uuid again with the same trial and
  // batches is a no-op (retried registrations); a different one is kConflict.
  virtual Status AddCheckpoint(const CheckpointRecord& c) = 0;
  virtual Result<CheckpointRecord> GetCheckpoint(const std::string& uuid) = 0;  // kNotFound
  // A trial's checkpoints ordered by batches, then created_at (both states).
  virtual Result<std::vector<CheckpointRecord>> ListCheckpoints(int64_t trial_id) = 0;
  virtual Status SetCheckpointState(const std::string& uuid, CheckpointState state) = 0;  // kNotFound
  // Issued checkpoint uuids. A uuid already issued or registered is kConflict.
  virtual Status ReserveCheckpoint(const CheckpointReservation& r) = 0;
  virtual Result<CheckpointReservation> GetCheckpointReservation(const std::string& uuid) = 0;  // kNotFound
  virtual Status DeleteCheckpointReservation(const std::string& uuid) = 0;  // missing is fine

  // Searchers. Commits the snapshot (replacing the previous one) and creates
  // the new trials atomically; returns their ids in order. A request_id that
  // the experiment already has is kConflict and nothing is written.
  virtual Result<std::vector<int64_t>> CommitSearcherStep(const SearcherStep& step) = 0;
  // The latest snapshot; kNotFound when the experiment's searcher never ran.
  virtual Result<std::string> GetSearcherSnapshot(int64_t experiment_id) = 0;

  // Live scheduling settings of experiments; all empty when never set.
  virtual Status SetResourceOverrides(int64_t experiment_id, const ResourceOverrides& o) = 0;  // kNotFound
  virtual Result<ResourceOverrides> GetResourceOverrides(int64_t experiment_id) = 0;

  // Agents. UpsertAgent keeps `enabled` and `draining` of a known agent.
  virtual Status UpsertAgent(const AgentRecord& a) = 0;
  virtual Result<std::vector<AgentRecord>> ListAgents() = 0;
  virtual Status SetAgentSchedulable(const std::string& id, bool enabled, bool draining) = 0;  // kNotFound
  // Agent enrolments: PutAgentEnrolment inserts or replaces the row of its id.
  virtual Status PutAgentEnrolment(const AgentEnrolmentRecord& e) = 0;
  virtual Result<std::vector<AgentEnrolmentRecord>> ListAgentEnrolments() = 0;  // by id
  // Slurm jobs of live allocations: Put inserts or replaces the row of its
  // allocation; Get is kNotFound without one; Delete of none is Ok.
  virtual Status PutSlurmJob(const SlurmJobRecord& j) = 0;
  virtual Result<SlurmJobRecord> GetSlurmJob(const std::string& allocation_id) = 0;
  virtual Status DeleteSlurmJob(const std::string& allocation_id) = 0;

  // Templates. SetTemplate creates it (owner as given) or replaces its
  // config (the owner kept); Get and Delete: kNotFound.
  virtual Status SetTemplate(const TemplateRecord& t) = 0;
  virtual Result<TemplateRecord> GetTemplate(const std::string& name) = 0;
  virtual Result<std::vector<TemplateRecord>> ListTemplates() = 0;  // by name
  virtual Status DeleteTemplate(const std::string& name) = 0;

  // Webhooks (webhook_records.h). CreateWebhook: kConflict when the name is
  // taken. DeleteWebhook removes its deliveries too (kNotFound).
  virtual Result<int64_t> CreateWebhook(const WebhookRecord& w) = 0;
  virtual Result<WebhookRecord> GetWebhook(int64_t id) = 0;       // kNotFound
  virtual Result<std::vector<WebhookRecord>> ListWebhooks() = 0;  // by id
  virtual Status DeleteWebhook(int64_t id) = 0;
  // Deliveries. Add writes one (its state as given, PENDING for an event to
  // send) and keeps the newest kKeptWebhookDeliveries ended ones of its
  // webhook, dropping older ended ones; kNotFound when the webhook is gone.
  // Update writes state, attempts, last_status, last_error and delivered_at.
  static constexpr int64_t kKeptWebhookDeliveries = 500;
  virtual Result<int64_t> AddWebhookDelivery(const WebhookDelivery& d) = 0;
  virtual Status UpdateWebhookDelivery(const WebhookDelivery& d) = 0;  // kNotFound
  virtual Result<WebhookDelivery> GetWebhookDelivery(int64_t id) = 0;  // kNotFound
  // A webhook's deliveries, newest first, at most `limit`.
  virtual Result<std::vector<WebhookDelivery>> ListWebhookDeliveries(int64_t webhook_id, int64_t limit) = 0;
  // Every PENDING delivery, oldest first (what a restarted master sends).
  virtual Result<std::vector<WebhookDelivery>> ListPendingWebhookDeliveries() = 0;

  // The model registry. CreateModel: kConflict when the name is taken;
  // Get, Update and Delete: kNotFound. DeleteModel removes its versions
  // with it and returns them.
  virtual Result<ModelRecord> CreateModel(const ModelRecord& m) = 0;
  virtual Result<ModelRecord> GetModel(const std::string& name) = 0;
  virtual Result<std::vector<ModelRecord>> ListModels() = 0;  // by name
  virtual Status UpdateModel(const std::string& name, const ModelUpdate& u) = 0;
  virtual Result<std::vector<ModelVersionRecord>> DeleteModel(const std::string& name) = 0;
  // Model versions. AddModelVersion gives the model's next number (never
  // one it gave before) and returns the stored version; kNotFound without
  // the model, kInvalidArgument when the checkpoint is not registered.
  // Get, Update, Delete: kNotFound; List: by version, kNotFound without the model.
  virtual Result<ModelVersionRecord> AddModelVersion(const ModelVersionRecord& v) = 0;
  virtual Result<ModelVersionRecord> GetModelVersion(const std::string& model, int64_t version) = 0;
  virtual Result<std::vector<ModelVersionRecord>> ListModelVersions(const std::string& model) = 0;
  virtual Status UpdateModelVersion(const std::string& model, int64_t version,
                                    const ModelVersionUpdate& u) = 0;
  virtual Status DeleteModelVersion(const std::string& model, int64_t version) = 0;
  // The versions that are checkpoint `uuid`, and those that are checkpoints
  // of experiment `experiment_id`'s trials; by model name, then version.
  virtual Result<std::vector<ModelVersionRecord>> ListCheckpointModelVersions(const std::string& uuid) = 0;
  virtual Result<std::vector<ModelVersionRecord>> ListExperimentModelVersions(int64_t experiment_id) = 0;
  // Every checkpoint that is a model version, each once (garbage
  // collection keeps them).
  virtual Result<std::vector<std::string>> ListModelVersionCheckpoints() = 0;

  // Workspaces (workspace_records.h). CreateWorkspace stores `members` and
  // `pools` with it; kConflict when the name is taken. Get, Update, Delete:
  // kNotFound. DeleteWorkspace removes its projects, members, pools and
  // webhooks (with their deliveries);
  // kConflict while one of its projects holds experiments, and for the
  // default workspace.
  virtual Result<WorkspaceRecord> CreateWorkspace(const WorkspaceRecord& w) = 0;
  virtual Result<WorkspaceRecord> GetWorkspace(int64_t id) = 0;
  virtual Result<std::vector<WorkspaceRecord>> ListWorkspaces() = 0;  // by id
  virtual Status UpdateWorkspace(int64_t id, const WorkspaceUpdate& u) = 0;
  virtual Status DeleteWorkspace(int64_t id) = 0;
  // Adds a member or changes their role; removing one who is not is kNotFound.
  virtual Status SetWorkspaceMember(int64_t id, const WorkspaceMember& m) = 0;
  virtual Status RemoveWorkspaceMember(int64_t id, const std::string& username) = 0;
  // Binds a pool (again: sets is_default); a default binding clears the
  // workspace's other default. Unbinding one not bound is kNotFound.
  virtual Status BindWorkspacePool(int64_t id, const WorkspacePool& p) = 0;
  virtual Status UnbindWorkspacePool(int64_t id, const std::string& pool) = 0;
  // Projects. CreateProject: kNotFound without the workspace, kConflict when
  // it has a project of that name. DeleteProject: kConflict while it holds
  // experiments, and for the default project.
  virtual Result<ProjectRecord> CreateProject(const ProjectRecord& p) = 0;
  virtual Result<ProjectRecord> GetProject(int64_t id) = 0;       // kNotFound
  virtual Result<std::vector<ProjectRecord>> ListProjects() = 0;  // by id
  virtual Status UpdateProject(int64_t id, const ProjectUpdate& u) = 0;
  virtual Status DeleteProject(int64_t id) = 0;
  // Moves an experiment to another project (kNotFound for either).
  virtual Status MoveExperiment(int64_t experiment_id, int64_t project_id) = 0;

  // Users. CreateUser: kConflict when the username is taken.
  virtual Result<int64_t> CreateUser(const UserRecord& u) = 0;
  virtual Result<UserRecord> GetUser(int64_t id) = 0;                         // kNotFound
  virtual Result<UserRecord> GetUserByName(const std::string& username) = 0;  // kNotFound
  virtual Result<std::vector<UserRecord>> ListUsers() = 0;                    // by id
  // Writes password_hash, role and active.
  virtual Status UpdateUser(const UserRecord& u) = 0;  // kNotFound
  // Links the user to a Unix account, or unlinks them (nullopt). kNotFound;
  // kInvalidArgument for a uid or gid outside 1..4294967294.
  virtual Status SetUserUnixAccount(int64_t id, const std::optional<UserUnixAccount>& account) = 0;

  // Sessions. A token hash is unique (kConflict).
  virtual Status CreateSession(const SessionRecord& s) = 0;
  virtual Result<SessionRecord> GetSession(const std::string& token_hash) = 0;  // kNotFound
  virtual Status DeleteSession(const std::string& token_hash) = 0;              // no-op when absent
  virtual Status DeleteUserSessions(int64_t user_id) = 0;
  // Removes sessions whose expires_at is before `now`; returns how many.
  virtual Result<int64_t> DeleteExpiredSessions(const std::string& now) = 0;

 protected:
  // First in a method that writes: bumps a generation as the method returns,
  // after its lock is released and its write is done.
  class WriteNotice {
   public:
    explicit WriteNotice(std::atomic<uint64_t>& generation) : generation_(generation) {}
    ~WriteNotice() { generation_.fetch_add(1, std::memory_order_acq_rel); }
    WriteNotice(const WriteNotice&) = delete;
    WriteNotice& operator=(const WriteNotice&) = delete;

   private:
    std::atomic<uint64_t>& generation_;
  };
  std::atomic<uint64_t> experiments_generation_{0};
  std::atomic<uint64_t> metrics_generation_{0};
};

// Current time as RFC 3339 UTC with milliseconds ("2026-11-22T09:01:12.345Z").
std::string NowRfc3339();
// The same format for any time point.
std::string FormatRfc3339(std::chrono::system_clock::time_point t);

}  // namespace ring
