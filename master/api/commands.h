#pragma once
// Request bodies decoded into the lifecycle's typed commands, validated
// here with a message naming the field; the lifecycle never sees JSON.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/config_retention.h"
#include "common/status.h"
#include "master/auth/accounts.h"
#include "master/lifecycle/commands.h"
#include "master/store/store.h"

namespace ring {

// POST /allocations/{id}/metrics: {"reports": [{kind, batches, metrics}]}.
Result<std::vector<MetricReport>> DecodeReports(const nlohmann::json& body, int64_t trial_id,
                                                const std::string& allocation_id);
// POST /allocations/{id}/checkpoints: {uuid, batches, resources, metadata}.
Result<CheckpointRecord> DecodeCheckpoint(const nlohmann::json& body);
// PATCH /experiments/{id}: any of priority, weight, max_slots.
Result<ResourcesPatch> DecodeResourcesPatch(const nlohmann::json& body);
// PATCH /experiments/{id}: name (1-128 characters), description (at most
// 4096) and labels (at most 64 distinct, 1-128 characters each; no control
// characters anywhere), taken out of `body`, which keeps the other fields.
Result<ExperimentInfo> TakeExperimentInfo(nlohmann::json& body);
// Takes "checkpoint_storage" ({save_experiment_best, save_trial_best,
// save_trial_latest}, integers >= 0) and "log_retention_days" (>= -1, or
// null for the master's) out of a PATCH body; kInvalidArgument naming the
// field.
Result<RetentionPatch> TakeRetentionPatch(nlohmann::json& body);
// POST /allocations/{id}/searcher/completed_operation: {length, metric}.
Result<OperationCompletion> DecodeCompletion(const nlohmann::json& body);
// POST /allocations/{id}/searcher/invalid_hparams: {message}; the message,
// cut to 4 KiB ("no reason given" when empty).
Result<std::string> DecodeInvalidHparams(const nlohmann::json& body);
// The "role" of POST /users ("user" when absent).
Result<UserRole> DecodeRole(const nlohmann::json& body);
// PATCH /users/{id}: any of password (with current_password for one's own),
// role, active, and unix ({uid, gid, user, group} to link, null to unlink).
Result<UserPatch> DecodeUserPatch(const nlohmann::json& body);

}  // namespace ring
