#include "master/lifecycle/warm_start.h"

#include <optional>

#include "master/lifecycle/read_access.h"

namespace ring {
namespace {

// A refusal naming the key and its line.
Status Refuse(ErrorCode code, const SearcherConfig& s, const std::string& why) {
  const std::string key = s.source_trial_id ? "searcher.source_trial_id" : "searcher.source_checkpoint_uuid";
  return Status(code, "experiment.yaml:" + std::to_string(s.source_line) + ": " + key + " " + why);
}

// The trial's own newest completed checkpoint: its resume point when that is
// its own, else the registered one with the most batches.
std::optional<CheckpointRecord> LatestOwn(Store& store, const TrialRecord& trial) {
  auto checkpoints = store.ListCheckpoints(trial.id);
  if (!checkpoints.ok()) return std::nullopt;
  std::optional<CheckpointRecord> latest;
  for (const auto& c : *checkpoints) {
    if (c.state != CheckpointState::kActive) continue;
    if (c.uuid == trial.latest_checkpoint) return c;
    if (!latest || c.batches >= latest->batches) latest = c;
  }
  return latest;
}

// The Unix account a user's trials run as on agents that switch users: the
// linked one, or (nullopt) each agent's account for unlinked owners.
Result<std::optional<int64_t>> RunsAsUid(Store& store, const std::string& username) {
  auto user = store.GetUserByName(username);
  if (!user.ok() && user.status().code() != ErrorCode::kNotFound) return user.status();
  if (!user.ok() || !user->unix_account) return std::optional<int64_t>();
  return std::optional<int64_t>(user->unix_account->uid);
}

// Why `who`'s trials in `pool` cannot read a checkpoint written by a trial of
// `owner`; empty when they can. A checkpoint folder is 0770 and its files
// 0640, owned by the writer's account and the master's group: on agents that
// run trials as their owners, only the same account reads it.
Result<std::string> WhyUnreadableOnDisk(Store& store, const std::string& pool, const std::string& owner,
                                        const std::string& who) {
  if (owner == who) return std::string();
  auto agents = store.ListAgents();
  if (!agents.ok()) return agents.status();
  bool switches = false;
  for (const auto& a : *agents) switches = switches || (a.pool == pool && a.runs_as_owner);
  if (!switches) return std::string();  // every trial runs as its agent's own account
  auto writer = RunsAsUid(store, owner);
  if (!writer.ok()) return writer.status();
  auto reader = RunsAsUid(store, who);
  if (!reader.ok()) return reader.status();
  if (*writer == *reader) return std::string();
  auto account = [](const std::string& user, const std::optional<int64_t>& uid) {
    return uid ? user + "'s trials run as uid " + std::to_string(*uid)
               : user + "'s trials run as the agents' account for unlinked users";
  };
  return "the agents of pool \"" + pool +
         "\" run trials as their owners' Unix accounts, and a checkpoint folder is readable only by the "
         "account that wrote it (and the master's group): " +
         account(owner, *writer) + ", " + account(who, *reader) + ". Ask " + owner +
         " to submit the experiment, or download the checkpoint (ring checkpoint download) and start "
         "from it in your own code";
}

}  // namespace

Result<std::string> ResolveWarmStart(Store& store, const ExperimentConfig& config, const Submitter& who) {
  const SearcherConfig& s = config.searcher;
  if (!s.source_trial_id && s.source_checkpoint_uuid.empty()) return std::string();
  CheckpointRecord source;
  if (s.source_trial_id) {
    const std::string trial_name = "trial " + std::to_string(*s.source_trial_id);
    auto trial = store.GetTrial(*s.source_trial_id);
    if (!trial.ok()) {
      if (trial.status().code() != ErrorCode::kNotFound) return trial.status();
      return Refuse(ErrorCode::kInvalidConfig, s, "names " + trial_name + ", which does not exist");
    }
    auto latest = LatestOwn(store, *trial);
    if (!latest)
      return Refuse(ErrorCode::kInvalidConfig, s,
                    "names " + trial_name + ", which has no completed checkpoint to start from");
    source = *latest;
  } else {
    auto c = store.GetCheckpoint(s.source_checkpoint_uuid);
    if (!c.ok()) {
      if (c.status().code() != ErrorCode::kNotFound) return c.status();
      return Refuse(ErrorCode::kInvalidConfig, s,
                    "names " + s.source_checkpoint_uuid + ", which is not a completed checkpoint");
    }
    if (c->state != CheckpointState::kActive)
      return Refuse(ErrorCode::kInvalidConfig, s,
                    "names checkpoint " + c->uuid + ", which was garbage collected: its files are gone");
    source = *c;
  }
  auto trial = store.GetTrial(source.trial_id);
  if (!trial.ok()) return trial.status();
  auto exp = store.GetExperiment(trial->experiment_id);
  if (!exp.ok()) return exp.status();
  const std::string what = "checkpoint " + source.uuid + " of trial " + std::to_string(trial->id) +
                           " (experiment " + std::to_string(exp->id) + ", owner " + exp->owner + ")";
  auto readable = MayReadExperiment(store, *exp, {who.username, who.admin, who.team_readable});
  if (!readable.ok()) return readable.status();
  if (!*readable)
    return Refuse(ErrorCode::kPermissionDenied, s,
                  "names " + what +
                      "; only its owner, an admin or a member of its workspace may start from it " +
                      "(this master has experiments_team_readable: false)");
  auto unreadable = WhyUnreadableOnDisk(store, config.resources.resource_pool, exp->owner, who.username);
  if (!unreadable.ok()) return unreadable.status();
  if (!unreadable->empty())
    return Refuse(ErrorCode::kPermissionDenied, s,
                  "names " + what + ", which " + who.username + "'s trials could not read: " + *unreadable);
  return source.uuid;
}

Result<CheckpointRecord> RestorableCheckpoint(Store& store, int64_t trial_id, const std::string& uuid) {
  auto c = store.GetCheckpoint(uuid);
  if (c.ok() && c->trial_id == trial_id) return c;
  if (c.ok()) {
    auto trial = store.GetTrial(trial_id);
    auto exp =
        trial.ok() ? store.GetExperiment(trial->experiment_id) : Result<ExperimentRecord>(trial.status());
    if (exp.ok() && exp->warm_start_checkpoint == uuid) return c;
  }
  return NotFound("checkpoint " + uuid + " does not belong to this trial");
}

}  // namespace ring
