#include "cli/experiment_commands.h"

#include <yaml-cpp/yaml.h>

#include "common/launch_mode.h"

#include <fstream>
#include <sstream>

#include <chrono>
#include <thread>

#include "cli/config_overrides.h"
#include "cli/experiment_wait.h"
#include "cli/format.h"
#include "cli/progress_bar.h"
#include "cli/queries.h"
#include "cli/table.h"
#include "cli/workspace_commands.h"
#include "common/archive.h"

namespace ring::cli {

Result<std::string> WithLaunchMode(const std::string& config_yaml, const std::string& launch) {
  auto mode = ParseLaunchMode(launch);
  if (!mode) return InvalidArgument("--launch must be per-node, per-slot or auto, got \"" + launch + "\"");
  YAML::Node root;
  try {
    root = YAML::Load(config_yaml);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("the config is not valid YAML (line " + std::to_string(e.mark.line + 1) +
                           "): " + e.msg);
  }
  if (!root.IsMap()) return InvalidArgument("the config must be a YAML map");
  if (root["resources"] && !root["resources"].IsMap())
    return InvalidArgument("resources must be a map to take --launch");
  root["resources"]["launch"] = std::string(ToString(*mode));
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

namespace {

// --test: follows the test experiment until a trial reports a validation of
// the searcher's metric (then stops the experiment) or the experiment ends.
int FollowTest(CliEnv& env, int64_t id) {
  for (;;) {
    auto exp = env.master.Get("/api/v1/experiments/" + std::to_string(id));
    if (!exp.ok()) return env.Fail(exp.status());
    const std::string state = GetString(*exp, "state");
    auto trials = FetchAllTrials(env.master, id);
    if (!trials.ok()) return env.Fail(trials.status());
    for (const auto& t : *trials) {
      if (Member(t, "best_validation").is_null()) continue;
      if (!IsTerminalState(state)) {
        auto killed =
            env.master.Post("/api/v1/experiments/" + std::to_string(id) + "/kill", nlohmann::json::object());
        if (!killed.ok()) return env.Fail(killed.status());
      }
      env.out << "Test succeeded: trial " << GetInt(t, "id") << " trained " << GetInt(t, "total_batches")
              << " batches and reported validation metrics"
              << (Member(t, "latest_checkpoint").is_null() ? "" : " and a checkpoint") << "; test experiment "
              << id << " stopped\n";
      return kExitOk;
    }
    if (IsTerminalState(state)) {
      bool trial_completed = false;
      for (const auto& t : *trials) trial_completed = trial_completed || GetString(t, "state") == "COMPLETED";
      if (state == "COMPLETED" && trial_completed) {
        env.out << "Test succeeded: test experiment " << id << " completed (no validation metric reported)\n";
        return kExitOk;
      }
      env.err << "ring: error: test experiment " << id << " ended " << state
              << " before its trial reported a validation; see ring trial logs\n";
      return kExitFailure;
    }
    std::this_thread::sleep_for(env.poll_interval);
  }
}

}  // namespace

int CreateExperiment(CliEnv& env, const CreateOptions& options) {
  std::ifstream in(options.config_path, std::ios::binary);
  if (!in) return env.Fail(InvalidArgument("cannot read the config " + options.config_path));
  std::stringstream original;
  original << in.rdbuf();
  auto overridden = ApplyConfigOverrides(original.str(), options.overrides);
  if (!overridden.ok()) return env.Fail(overridden.status());
  if (options.test) {
    overridden = TestModeConfig(*overridden);
    if (!overridden.ok()) return env.Fail(overridden.status());
  }
  if (!options.launch.empty()) {
    // The flag wins over the file's resources.launch, without editing it.
    overridden = WithLaunchMode(*overridden, options.launch);
    if (!overridden.ok()) return env.Fail(overridden.status());
  }
  std::stringstream config(*overridden);

  PackOptions pack;
  pack.max_bytes = options.max_model_size;
  ProgressBar pack_bar(env.err, "Packing  ", env.err_is_tty && !env.json);
  pack.progress = [&](uint64_t done, uint64_t total) { pack_bar.Update(done, total); };
  auto archive = PackDirectory(options.model_dir, pack);
  pack_bar.Finish();
  if (!archive.ok()) {
    std::string message =
        "cannot pack the model directory " + options.model_dir + ": " + archive.status().message();
    const std::string& why = archive.status().message();
    bool too_large = archive.status().code() == ErrorCode::kTooLarge;
    for (const char* word : {"limit", "too large", "exceeds", "larger than", "max"})
      too_large = too_large || why.find(word) != std::string::npos;
    if (too_large) {
      message += " (list large files in " + options.model_dir +
                 "/.ringignore, or raise --max-model-size, now " + FormatBytes(options.max_model_size) + ")";
    }
    return env.Fail(Status(archive.status().code(), message));
  }

  nlohmann::json body{
      {"config", config.str()}, {"model_definition", Base64Encode(*archive)}, {"activate", !options.paused}};
  if (!options.template_name.empty()) body["template"] = options.template_name;
  if (!options.project.empty()) {
    auto project = ResolveProject(env, options.project);
    if (!project.ok()) return env.Fail(project.status());
    body["project_id"] = *project;
  }
  std::string text;
  try {
    text = body.dump();
  } catch (const nlohmann::json::type_error&) {  // 316: invalid UTF-8
    return env.Fail(
        InvalidArgument(options.config_path + " is not UTF-8 text; save it as UTF-8 and try again"));
  }
  ProgressBar upload_bar(env.err, "Uploading", env.err_is_tty && !env.json);
  auto created = env.master.PostWithProgress(
      "/api/v1/experiments", text, [&](uint64_t done, uint64_t total) { upload_bar.Update(done, total); });
  upload_bar.Finish();
  if (!created.ok()) return env.Fail(created.status());
  for (const auto& w : Member(*created, "warnings"))
    env.err << "ring: warning: " << options.config_path << ":" << w.value("line", 0) << ": "
            << w.value("message", "") << '\n';
  int64_t id = GetInt(*created, "id", -1);
  if (id < 0) return env.Fail(Internal("the master's answer has no experiment id: " + created->dump()));
  if (env.json) {
    if (!options.follow) env.out << created->dump(2) << '\n';
  } else {
    env.out << "Created " << (options.test ? "test experiment " : "experiment ") << id << '\n' << std::flush;
  }
  if (options.test) return FollowTest(env, id);
  if (!options.follow) return kExitOk;
  return WaitForExperiment(env, id, {std::nullopt, /*show_metrics=*/true, /*print_final_json=*/true});
}

int ForkExperiment(CliEnv& env, int64_t parent, const CreateOptions& options) {
  std::string base;
  if (options.config_path.empty()) {
    auto exp = env.master.Get("/api/v1/experiments/" + std::to_string(parent));
    if (!exp.ok()) return env.Fail(exp.status());
    base = Field(*exp, "config");
  } else {
    std::ifstream in(options.config_path);
    if (!in) return env.Fail(InvalidArgument("cannot read the config " + options.config_path));
    std::stringstream text;
    text << in.rdbuf();
    base = text.str();
  }
  auto config = ApplyConfigOverrides(base, options.overrides);
  if (!config.ok()) return env.Fail(config.status());
  nlohmann::json body{{"config", *config}, {"forked_from", parent}, {"activate", !options.paused}};
  if (!options.template_name.empty()) body["template"] = options.template_name;
  auto created = env.master.Post("/api/v1/experiments", body);
  if (!created.ok()) return env.Fail(created.status());
  for (const auto& w : Member(*created, "warnings"))
    env.err << "ring: warning: " << w.value("path", "") << ": " << w.value("message", "") << '\n';
  const int64_t id = GetInt(*created, "id", -1);
  if (id < 0) return env.Fail(Internal("the master's answer has no experiment id: " + created->dump()));
  if (env.json) {
    if (!options.follow) env.out << created->dump(2) << '\n';
  } else {
    env.out << "Forked experiment " << parent << " as experiment " << id << '\n' << std::flush;
  }
  if (!options.follow) return kExitOk;
  return WaitForExperiment(env, id, {std::nullopt, /*show_metrics=*/true, /*print_final_json=*/true});
}

int ListExperiments(CliEnv& env, const ExperimentListOptions& o) {
  std::string target =
      "/api/v1/experiments?limit=" + std::to_string(o.limit) + "&offset=" + std::to_string(o.offset);
  std::string states;
  for (const auto& s : o.states) states += (states.empty() ? "" : ",") + s;
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"state", states},
                                   {"owner", o.owner},
                                   {"label", o.label},
                                   {"name", o.name},
                                   {"archived", o.archived},
                                   {"sort", o.sort}})
    if (!value.empty()) target += "&" + key + "=" + PercentEncode(value);
  if (o.descending) target += "&order=desc";
  if (!o.project.empty()) {
    auto project = ResolveProject(env, o.project);
    if (!project.ok()) return env.Fail(project.status());
    target += "&project_id=" + std::to_string(*project);
  }
  if (!o.workspace.empty()) {
    auto workspace = ResolveWorkspace(env, o.workspace);
    if (!workspace.ok()) return env.Fail(workspace.status());
    target += "&workspace_id=" + std::to_string(*workspace);
  }
  auto res = env.master.Get(target);
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  Table table({"id", "name", "state", "progress", "trials", "best validation", "owner", "labels", "created"});
  table.SetMaxWidth(1, 32);
  table.SetMaxWidth(7, 40);
  const auto& experiments = Member(*res, "experiments");
  if (experiments.is_array()) {
    for (const auto& e : experiments) {
      std::string labels;
      for (const auto& l : Member(e, "labels"))
        if (l.is_string()) labels += (labels.empty() ? "" : ", ") + l.get<std::string>();
      table.AddRow({Field(e, "id"), Field(e, "name"), Field(e, "state"),
                    FormatProgress(Member(e, "progress")), Field(e, "num_trials"),
                    Field(e, "best_validation"), Field(e, "owner"), labels, Field(e, "created_at")});
    }
  }
  table.Print(env.out);
  int64_t total = GetInt(*res, "total", static_cast<int64_t>(table.rows()));
  if (total > static_cast<int64_t>(table.rows()))
    env.out << "Showing " << table.rows() << " of " << total << " experiments (use --limit/--offset)\n";
  return kExitOk;
}

int DescribeExperiment(CliEnv& env, int64_t id) {
  auto exp = env.master.Get("/api/v1/experiments/" + std::to_string(id));
  if (!exp.ok()) return env.Fail(exp.status());
  auto trials = FetchAllTrials(env.master, id);
  if (!trials.ok()) return env.Fail(trials.status());
  // The last validation report of each trial, in trial order.
  nlohmann::json final_validation = nlohmann::json::array();
  for (const auto& t : *trials) {
    auto latest = LatestMetrics(env.master, GetInt(t, "id"), "validation");
    if (!latest.ok()) return env.Fail(latest.status());
    if (latest->is_null()) continue;
    nlohmann::json entry = *latest;
    entry["trial_id"] = GetInt(t, "id");
    final_validation.push_back(std::move(entry));
  }
  if (env.json) {
    env.out << nlohmann::json{{"experiment", *exp},
                              {"trials", *trials},
                              {"final_validation", final_validation}}
                   .dump(2)
            << '\n';
    return kExitOk;
  }

  auto& out = env.out;
  out << "Experiment " << id << ": " << Field(*exp, "name") << '\n';
  Table fields({"field", "value"});
  fields.AddRow({"State", Field(*exp, "state")});
  fields.AddRow({"Owner", Field(*exp, "owner")});
  fields.AddRow({"Project", Field(*exp, "workspace") + "/" + Field(*exp, "project") + " (project " +
                                Field(*exp, "project_id") + ")"});
  fields.AddRow({"Progress", FormatProgress(Member(*exp, "progress"))});
  fields.AddRow({"Trials", Field(*exp, "num_trials")});
  fields.AddRow({"Best trial", Field(*exp, "best_trial_id")});
  fields.AddRow({"Best validation", Field(*exp, "best_validation")});
  fields.AddRow({"Created", Field(*exp, "created_at")});
  fields.AddRow({"Ended", Field(*exp, "ended_at")});
  fields.AddRow({"Archived", Field(*exp, "archived")});
  if (const auto& parent = Member(*exp, "forked_from"); parent.is_number_integer())
    fields.AddRow({"Forked from", "experiment " + std::to_string(parent.get<int64_t>())});
  if (const auto& w = Member(*exp, "warm_start"); w.is_object())
    fields.AddRow({"Warm start", "checkpoint " + Field(w, "checkpoint_uuid") + " (trial " +
                                     Field(w, "trial_id") + " of experiment " + Field(w, "experiment_id") +
                                     ", " + Field(w, "batches") + " batches" +
                                     (Field(w, "state") == "ACTIVE" ? "" : ", garbage collected") + ")"});
  std::ostringstream text;
  fields.Print(text);
  // Drop the table's header row: "key  value" lines read better here.
  std::string body = text.str();
  out << body.substr(body.find('\n') + 1);

  out << "\nTrials:\n";
  // The log signal column only when a log policy matched some trial.
  bool signals = false;
  for (const auto& t : *trials) signals = signals || Member(t, "log_signal").is_string();
  std::vector<std::string> columns = {"id", "state", "hparams", "batches", "restarts", "best validation"};
  if (signals) columns.push_back("log signal");
  Table table(columns);
  table.SetMaxWidth(2, 60);
  for (const auto& t : *trials) {
    std::vector<std::string> row = {Field(t, "id"),
                                    Field(t, "state"),
                                    FormatHparams(Member(t, "hparams")),
                                    Field(t, "total_batches"),
                                    Field(t, "restarts"),
                                    Field(t, "best_validation")};
    if (signals) row.push_back(Member(t, "log_signal").is_string() ? Field(t, "log_signal") : "");
    table.AddRow(row);
  }
  table.Print(out);

  out << "\nFinal validation metrics:\n";
  if (final_validation.empty()) {
    out << "(none reported yet)\n";
    return kExitOk;
  }
  Table metrics({"trial", "batches", "metrics"});
  for (const auto& m : final_validation)
    metrics.AddRow({Field(m, "trial_id"), Field(m, "batches"), FormatMetrics(Member(m, "metrics"))});
  metrics.Print(out);
  return kExitOk;
}

int ExperimentAction(CliEnv& env, int64_t id, const std::string& action) {
  auto res =
      env.master.Post("/api/v1/experiments/" + std::to_string(id) + "/" + action, nlohmann::json::object());
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
  } else {
    env.out << "Experiment " << id << ": " << action << " requested\n";
  }
  return kExitOk;
}

}  // namespace ring::cli
