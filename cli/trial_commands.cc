#include "cli/trial_commands.h"

#include <chrono>
#include <thread>

#include "cli/experiment_wait.h"
#include "cli/format.h"
#include "cli/queries.h"
#include "cli/table.h"

namespace ring::cli {

int DescribeTrial(CliEnv& env, int64_t id) {
  const std::string path = "/api/v1/trials/" + std::to_string(id);
  auto trial = env.master.Get(path);
  if (!trial.ok()) return env.Fail(trial.status());
  auto training = env.master.Get(path + "/metrics?kind=training");
  if (!training.ok()) return env.Fail(training.status());
  auto validation = env.master.Get(path + "/metrics?kind=validation");
  if (!validation.ok()) return env.Fail(validation.status());
  if (env.json) {
    env.out << nlohmann::json{{"trial", *trial},
                              {"training_metrics", Member(*training, "metrics")},
                              {"validation_metrics", Member(*validation, "metrics")}}
                   .dump(2)
            << '\n';
    return kExitOk;
  }
  auto& out = env.out;
  out << "Trial " << id << " of experiment " << Field(*trial, "experiment_id") << '\n';
  out << "State:              " << Field(*trial, "state") << '\n';
  out << "Hyperparameters:    " << FormatHparams(Member(*trial, "hparams")) << '\n';
  out << "Batches:            " << Field(*trial, "total_batches") << '\n';
  out << "Restarts:           " << Field(*trial, "restarts") << '\n';
  if (Field(*trial, "state") == "ACTIVE" || Field(*trial, "state") == "PAUSED") {
    const auto& op = Member(*trial, "searcher_operation");
    out << "Searcher:           "
        << (op.is_object() ? "train to " + Field(op, "length") + " batches"
                           : std::string("waiting for the searcher (a promotion or the end)"))
        << '\n';
  }
  if (const auto& why = Member(*trial, "last_exit_reason"); why.is_string())
    out << "Last exit:          " << why.get<std::string>() << '\n';
  if (const auto& signal = Member(*trial, "log_signal"); signal.is_string())
    out << "Log signal:         " << signal.get<std::string>() << '\n';
  out << "Best validation:    " << Field(*trial, "best_validation") << '\n';
  out << "Latest checkpoint:  " << Field(*trial, "latest_checkpoint") << '\n';
  if (const auto& continued = Member(*trial, "continued_in"); continued.is_array() && !continued.empty()) {
    std::string ids;
    for (const auto& c : continued) ids += (ids.empty() ? "experiment " : ", ") + Field(c, "experiment_id");
    out << "Continued in:       " << ids << '\n';
  }
  out << "Created:            " << Field(*trial, "created_at") << '\n';
  out << "Ended:              " << Field(*trial, "ended_at") << '\n';

  auto print_metrics = [&](const char* title, const nlohmann::json& list) {
    out << '\n' << title << ":\n";
    if (!list.is_array() || list.empty()) {
      out << "(none)\n";
      return;
    }
    Table table({"batches", "metrics", "reported"});
    for (const auto& m : list)
      table.AddRow({Field(m, "batches"), FormatMetrics(Member(m, "metrics")), Field(m, "reported_at")});
    table.Print(out);
  };
  if (const auto& matches = Member(*trial, "log_policy_matches"); matches.is_array() && !matches.empty()) {
    out << "\nLog policy matches:\n";
    Table table({"policy", "action", "node", "allocation", "rank", "line"});
    for (const auto& m : matches) {
      const auto& action = Member(m, "action");
      table.AddRow({Field(m, "policy"), action.is_string() ? action.get<std::string>() : "label",
                    Field(m, "node"), Field(m, "allocation_id"), Field(m, "rank"), Field(m, "line")});
    }
    table.Print(out);
  }
  print_metrics("Validation metrics", Member(*validation, "metrics"));
  const auto& train = Member(*training, "metrics");
  if (train.is_array() && !train.empty()) {
    out << "\nLatest training metrics: batches " << Field(train.back(), "batches") << "  "
        << FormatMetrics(Member(train.back(), "metrics")) << '\n';
  }
  return kExitOk;
}

int TrialLogs(CliEnv& env, int64_t id, const LogsOptions& options) {
  int64_t offset = 0;
  bool unreachable = false;
  std::chrono::steady_clock::time_point unreachable_since{};
  for (;;) {
    std::string target = "/api/v1/trials/" + std::to_string(id) + "/logs?offset=" + std::to_string(offset) +
                         "&limit=" + std::to_string(options.page_size) +
                         "&follow=" + (options.follow ? "true" : "false");
    if (options.rank) target += "&rank=" + std::to_string(*options.rank);
    auto res = env.master.Get(target);
    if (!res.ok()) {
      // While following, ride out a master restart for a while.
      if (options.follow && IsTransportError(res.status())) {
        auto now = std::chrono::steady_clock::now();
        if (!unreachable) unreachable_since = now;
        unreachable = true;
        if (now - unreachable_since < env.unreachable_grace) {
          std::this_thread::sleep_for(env.poll_interval);
          continue;
        }
      }
      return env.Fail(res.status());
    }
    unreachable = false;
    const auto& logs = Member(*res, "logs");
    size_t count = logs.is_array() ? logs.size() : 0;
    const int64_t start_offset = offset;
    for (size_t i = 0; i < count; ++i) {
      const auto& line = logs[i];
      if (env.json) {
        env.out << line.dump() << '\n';
      } else {
        if (!options.rank) env.out << "[rank " << GetInt(line, "rank") << "] ";
        env.out << GetString(line, "line") << '\n';
      }
      offset = std::max(offset, GetInt(line, "id", offset));
    }
    env.out << std::flush;
    offset = std::max(offset, GetInt(*res, "offset", offset));
    if (count > 0 && offset <= start_offset) return kExitOk;  // not advancing: avoid a loop
    if (count > 0) continue;                                  // there may be more right away
    if (!options.follow) return kExitOk;
    if (IsTerminalState(GetString(*res, "trial_state"))) return kExitOk;
    // follow=true already waited on the master's side; pause briefly when it answered at once.
    std::this_thread::sleep_for(env.poll_interval / 4);
  }
}

int KillTrial(CliEnv& env, int64_t id) {
  auto res = env.master.Post("/api/v1/trials/" + std::to_string(id) + "/kill", nlohmann::json::object());
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  const std::string state = Field(*res, "state");
  if (state == "CANCELED" || state == "COMPLETED" || state == "ERROR")
    env.out << "Trial " << id << " is " << state << '\n';
  else
    env.out << "Killing trial " << id << "; it ends CANCELED once its processes exit, and experiment "
            << Field(*res, "experiment_id") << " goes on with its other trials\n";
  return kExitOk;
}

int ContinueTrial(CliEnv& env, int64_t id, int64_t length, bool follow, bool paused, bool in_place) {
  nlohmann::json body{{"length", length}};
  if (in_place)
    body["in_place"] = true;
  else
    body["activate"] = !paused;
  auto res = env.master.Post("/api/v1/trials/" + std::to_string(id) + "/continue", body);
  if (!res.ok()) return env.Fail(res.status());
  for (const auto& w : Member(*res, "warnings"))
    env.err << "ring: warning: " << w.value("path", "") << ": " << w.value("message", "") << '\n';
  const int64_t experiment = GetInt(*res, "id", -1);
  if (experiment < 0) return env.Fail(Internal("the master's answer has no experiment id: " + res->dump()));
  if (env.json) {
    if (!follow) env.out << res->dump(2) << '\n';
  } else {
    env.out << "Continuing trial " << id << (in_place ? " in place in experiment " : " as experiment ")
            << experiment << '\n'
            << std::flush;
  }
  if (!follow) return kExitOk;
  return WaitForExperiment(env, experiment, {std::nullopt, /*show_metrics=*/true, /*print_final_json=*/true});
}

}  // namespace ring::cli
