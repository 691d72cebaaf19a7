#include "master/api/json_views.h"

namespace ring {
namespace {

nlohmann::json OrNull(const std::string& s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

template <typename T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json PlacementsJson(const std::vector<Placement>& placements) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : placements) list.push_back({{"agent_id", p.agent_id}, {"slot_ids", p.slot_ids}});
  return list;
}

nlohmann::json ParsedOr(const std::string& text, nlohmann::json fallback) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? fallback : j;
}

}  // namespace

nlohmann::json ExperimentJson(const ExperimentRecord& e, int64_t num_trials) {
  return {{"id", e.id},
          {"name", e.name},
          {"state", ToString(e.state)},
          {"owner", e.owner},
          {"config", e.config_yaml},
          {"progress", e.progress},
          {"num_trials", num_trials},
          {"best_trial_id", OrNull(e.best_trial_id)},
          {"best_validation", OrNull(e.best_validation)},
          {"created_at", e.created_at},
          {"ended_at", OrNull(e.ended_at)},
          {"archived", e.archived},
          {"forked_from", OrNull(e.parent_id)}};
}

nlohmann::json TrialJson(const TrialRecord& t) {
  return {{"id", t.id},
          {"task_id", t.task_id},
          {"experiment_id", t.experiment_id},
          {"state", ToString(t.state)},
          {"hparams", ParsedOr(t.hparams_json, nlohmann::json::object())},
          {"seed", t.seed},
          {"restarts", t.restarts},
          {"total_batches", t.total_batches},
          {"best_validation", OrNull(t.best_validation)},
          {"latest_checkpoint", OrNull(t.latest_checkpoint)},
          {"request_id", OrNull(t.request_id)},
          {"created_at", t.created_at},
          {"ended_at", OrNull(t.ended_at)},
          {"log_signal", OrNull(t.log_signal)}};
}

nlohmann::json LogPolicyMatchJson(const LogPolicyMatch& m) {
  return {
      {"policy", m.policy},
      {"action", m.action == LogPolicyAction::kNone ? nlohmann::json() : nlohmann::json(ToString(m.action))},
      {"node", m.node},
      {"allocation_id", m.allocation_id},
      {"rank", m.rank},
      {"line", m.line},
      {"matched_at", m.matched_at}};
}

nlohmann::json AllocationJson(const AllocationRecord& a) {
  return {{"id", a.id},
          {"task_id", a.task_id},
          {"trial_id", OrNull(a.trial_id)},
          {"state", ToString(a.state)},
          {"slots", a.slots},
          {"placements", PlacementsJson(a.placements)},
          {"end_cause", a.end_cause ? nlohmann::json(ToString(*a.end_cause)) : nlohmann::json()},
          {"exit_reason", OrNull(a.exit_reason)},
          {"exit_code", OrNull(a.exit_code)},
          {"created_at", a.created_at},
          {"ended_at", OrNull(a.ended_at)}};
}

nlohmann::json MetricJson(const MetricReport& m) {
  return {{"batches", m.batches},
          {"metrics", ParsedOr(m.metrics_json, nlohmann::json::object())},
          {"reported_at", m.reported_at}};
}

nlohmann::json LogJson(const LogRecord& l) {
  return {{"id", l.id},     {"allocation_id", l.allocation_id},
          {"rank", l.rank}, {"stream", l.stream},
          {"line", l.line}, {"ts_ms", l.ts_ms}};
}

nlohmann::json CheckpointJson(const CheckpointRecord& c) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : c.resources)
    files.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  return {{"uuid", c.uuid},
          {"trial_id", c.trial_id},
          {"allocation_id", c.allocation_id},
          {"batches", c.batches},
          {"state", ToString(c.state)},
          {"storage",
           {{"type", c.storage.type},
            {"host_path", c.storage.host_path},
            {"storage_path", c.storage.storage_path}}},
          {"resources", files},
          {"metadata", ParsedOr(c.metadata_json, nlohmann::json::object())},
          {"created_at", c.created_at}};
}

nlohmann::json JobsJson(const std::vector<JobRow>& rows) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& row : rows)
    jobs.push_back(
        {{"allocation_id", row.allocation_id},
         {"kind", ToString(row.kind)},
         {"task_id", row.task_id},
         // null for a task that is not a trial
         {"trial_id", row.kind == TaskKind::kTrial ? nlohmann::json(row.trial_id) : nlohmann::json()},
         {"experiment_id",
          row.kind == TaskKind::kTrial ? nlohmann::json(row.experiment_id) : nlohmann::json()},
         {"owner", row.owner},
         {"state", ToString(row.state)},
         {"slots", row.slots},
         {"pool", row.pool},
         {"priority", row.priority},
         {"weight", row.weight},
         {"queued_at", row.queued_at},
         {"preempting", row.preempting},
         {"position", row.position ? nlohmann::json(*row.position) : nlohmann::json()},
         {"pending_reason", row.reason ? nlohmann::json(*row.reason) : nlohmann::json()},
         // What `ring job list` and the web UI show as why it waits
         // (GET /api/v1/jobs words it for Slurm pools).
         {"why_waiting", row.reason ? nlohmann::json(*row.reason) : nlohmann::json()}});
  return jobs;
}

nlohmann::json UserJson(const UserRecord& u) {
  nlohmann::json unix;  // null: not linked
  if (u.unix_account)
    unix = {{"uid", u.unix_account->uid},
            {"gid", u.unix_account->gid},
            {"user", u.unix_account->user},
            {"group", u.unix_account->group}};
  return {{"id", u.id},         {"username", u.username},     {"role", ToString(u.role)},
          {"active", u.active}, {"created_at", u.created_at}, {"unix", unix}};
}

}  // namespace ring
