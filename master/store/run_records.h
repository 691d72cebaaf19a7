#pragma once
// Experiments, their trials, tasks and allocations, and what trials report
// (metrics, logs, log policy matches), as the store keeps them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/end_cause.h"
#include "common/log_policy_action.h"
#include "common/metric_kind.h"
#include "common/placement.h"
#include "common/states.h"
#include "common/task_config.h"
#include "common/task_kind.h"
#include "master/store/workspace_records.h"

namespace ring {

struct ExperimentRecord {
  int64_t id = 0;
  std::string name;
  std::string owner;
  std::string config_yaml;
  RunState state = RunState::kActive;
  bool archived = false;
  double progress = 0;  // 0..1
  std::optional<int64_t> best_trial_id;
  std::optional<double> best_validation;
  std::string created_at;  // RFC 3339 UTC, set by the store
  std::string ended_at;    // empty while running
  // The registered checkpoint every trial starts from (warm start), set at
  // creation only; empty for none.
  std::string warm_start_checkpoint;
  // The description and labels set after submit (PATCH); nullopt: the config's.
  std::optional<std::string> description;
  std::optional<std::vector<std::string>> labels;
  bool deleting = false;  // DELETE asked for it; it goes once its files are gone
  // The experiment it was forked from (set at creation), if any.
  std::optional<int64_t> parent_id;
  // The project it belongs to (workspace_records.h); set at creation,
  // changed by MoveExperiment only.
  int64_t project_id = kDefaultProjectId;
};

// What PATCH /experiments/{id} changes of how an experiment is named and
// found; each absent field stays as it is.
struct ExperimentInfo {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<std::vector<std::string>> labels;
};

// What holds slots: a trial, or (later) a command, shell or notebook. A
// trial's task is made with the trial, in the same transaction, and owned by
// the experiment's owner; its end is the trial's.
struct TaskRecord {
  int64_t id = 0;
  TaskKind kind = TaskKind::kTrial;
  std::string owner;
  std::string created_at;  // set by the store
  std::string ended_at;    // empty while it runs
  // A task of another kind: its effective config. Empty for a trial's task.
  TaskSpec spec;
};

struct TrialRecord {
  int64_t id = 0;
  int64_t task_id = 0;  // set by the store
  int64_t experiment_id = 0;
  RunState state = RunState::kActive;
  std::string hparams_json = "{}";
  int64_t seed = 0;
  int64_t restarts = 0;
  int64_t total_batches = 0;
  std::optional<double> best_validation;
  std::string latest_checkpoint;      // uuid, empty if none
  std::optional<int64_t> request_id;  // the searcher's id for the trial
  std::string created_at;
  std::string ended_at;
  // Read only: the policy of its latest log policy match (Determined's "log
  // signal"), empty if none. Written through AddLogPolicyMatch.
  std::string log_signal;
};

// One attempt of a task on resources.
struct AllocationRecord {
  std::string
      id;  // a trial's "<trial>.<attempt>" ("7.0"); another task's "<kind>-<task>.<attempt>" ("command-12.0")
  int64_t task_id = 0;
  std::optional<int64_t> trial_id;  // when the task is a trial
  AllocationState state = AllocationState::kPending;
  std::string token_hash;  // SHA-256 hex of the allocation token
  int64_t slots = 1;
  std::vector<Placement> placements;  // one per agent holding it, rank 0's first
  // The processes its agents run, ranks 0..processes-1 in placement order:
  // 0 for one per slot; one per agent under per-node launch and for tasks
  // that are not trials. Recorded with the placements.
  int processes = 0;
  std::optional<EndCause> end_cause;  // set when TERMINATED: what ended it
  std::string exit_reason;            // set when TERMINATED: its detail for people
  std::optional<int> exit_code;
  std::string created_at;
  std::string ended_at;
};

struct MetricReport {
  int64_t trial_id = 0;
  MetricKind kind = MetricKind::kTraining;
  int64_t batches = 0;
  std::string metrics_json = "{}";
  std::string allocation_id;
  std::string reported_at;  // set by the store
};

struct LogRecord {
  int64_t id = 0;        // increasing; the `offset` of log queries
  int64_t trial_id = 0;  // a trial's line (AddLogs)
  std::string allocation_id;
  int rank = 0;
  std::string stream;
  std::string line;
  int64_t ts_ms = 0;
  int64_t task_id = 0;  // a line of a task that is not a trial (AddTaskLogs)
};

// A log policy that matched a line of a trial's output on a node. The store
// keeps the first match of each (trial, policy, node).
struct LogPolicyMatch {
  int64_t trial_id = 0;
  std::string policy;  // its name, or its pattern when it has none
  LogPolicyAction action = LogPolicyAction::kNone;
  std::string node;  // the agent that printed it
  std::string allocation_id;
  int rank = 0;
  std::string line;        // as stored in the logs (tokens hidden), at most 1 KiB
  std::string matched_at;  // set by the store
};

// An experiment's scheduling settings as changed while it runs; an empty
// field keeps the value of its config.
struct ResourceOverrides {
  std::optional<int64_t> priority;
  std::optional<double> weight;
  std::optional<int64_t> max_slots;
  // What an admin last set: the owner may not go past it (more important
  // than admin_priority, more slots than admin_max_slots).
  std::optional<int64_t> admin_priority;
  std::optional<int64_t> admin_max_slots;
  bool operator==(const ResourceOverrides&) const = default;
};

// One decision step of an experiment's searcher: its new snapshot and the
// trials its decisions create, written in one transaction.
struct SearcherStep {
  int64_t experiment_id = 0;
  std::string snapshot_json;
  std::vector<TrialRecord> new_trials;  // each with a request_id
};

}  // namespace ring
