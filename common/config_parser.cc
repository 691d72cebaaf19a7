// The top level of the experiment config: which sections there are, lengths,
// and the keys that are one value each.
#include "common/config_parser.h"

namespace ring {
namespace {

// hyperparameters.global_batch_size when it is a constant positive integer.
std::optional<int64_t> GlobalBatchSize(const ExperimentConfig& c) {
  const auto it = c.hyperparameters.find("global_batch_size");
  if (it == c.hyperparameters.end() || it->second.type != Hyperparameter::Type::kConst) return std::nullopt;
  const auto& v = it->second.value;
  if (!v.is_number_integer() || v.get<int64_t>() < 1) return std::nullopt;
  return v.get<int64_t>();
}

}  // namespace

Length ConfigParser::ParseLength(const YAML::Node& node, const std::string& path, int64_t min) {
  const char* what = min > 0 ? "a positive integer" : "an integer >= 0";
  Length l;
  if (!node.IsMap()) {
    if (node.IsSequence() || !node.IsScalar())
      w_.Fail(node, path + " must be an integer or a map like {batches: N}, got " + YamlWalker::Show(node));
    int64_t n = 0;
    if (!YAML::convert<int64_t>::decode(node, n))
      w_.Fail(node, path + " must be an integer or a map like {batches: N}, got " + YamlWalker::Show(node));
    l.value = w_.Int(node, path, min, what);
    l.bare = true;
    return l;
  }
  if (node.size() != 1)
    w_.Fail(node, path + " must have exactly one of batches, records, epochs, got " +
                      (node.size() == 0 ? std::string("none") : std::to_string(node.size()) + " keys"));
  const std::string unit = node.begin()->first.Scalar();
  if (unit != "batches" && unit != "records" && unit != "epochs")
    w_.Fail(node.begin()->first,
            "unknown key \"" + path + "." + unit + "\" (a length is one of batches, records, epochs)");
  l.unit = unit == "records"  ? Length::Unit::kRecords
           : unit == "epochs" ? Length::Unit::kEpochs
                              : Length::Unit::kBatches;
  l.value = w_.Int(node.begin()->second, path + "." + unit, min, what);
  return l;
}

std::optional<int64_t> ConfigParser::ToBatches(const Length& l, const ExperimentConfig& c, std::string* why) {
  if (l.unit == Length::Unit::kBatches) return l.value;
  if (l.unit == Length::Unit::kEpochs && c.records_per_epoch <= 0) {
    *why = "records_per_epoch";
    return std::nullopt;
  }
  const auto batch = GlobalBatchSize(c);
  if (!batch) {
    *why = "a constant hyperparameters.global_batch_size";
    return std::nullopt;
  }
  const int64_t records = l.unit == Length::Unit::kRecords ? l.value : l.value * c.records_per_epoch;
  return (records + *batch - 1) / *batch;
}

// searcher.max_length in batches, and how its unit counts in batches (the
// trial gets lengths in the config's unit, as Determined gives them). A
// length in records or epochs that cannot be counted is refused where
// operations need it (adaptive_asha without time_metric) and a warning
// elsewhere: those trials get no searcher operations from the master.
void ConfigParser::CountMaxLength(const YAML::Node& node, ExperimentConfig& c) {
  SearcherConfig& s = c.searcher;
  const Length& l = *s.max_length;
  std::string why;
  const auto batches = ToBatches(l, c, &why);
  if (batches) {
    s.max_length_batches = *batches;
    if (l.unit != Length::Unit::kBatches) {
      s.records_per_unit = l.unit == Length::Unit::kRecords ? 1 : c.records_per_epoch;
      s.global_batch_size = *GlobalBatchSize(c);
    }
    return;
  }
  const std::string unit = ToString(l.unit);
  const std::string message =
      "searcher.max_length in " + unit + " needs " + why + " to be counted in batches";
  if (s.name == "adaptive_asha" && !s.time_metric)
    w_.Error(node, "searcher.max_length", message + ": adaptive_asha cannot plan its rungs without it");
  else
    w_.Warn(node, "searcher.max_length",
            message +
                ": without it the master hands out no searcher operations and the trial trains as "
                "long as it decides (the determined package's searcher.operations() yields one of " +
                std::to_string(l.value) + " " + unit + ")");
}

ExperimentConfig ConfigParser::Parse(const YAML::Node& root) {
  ExperimentConfig c;
  w_.set_document(root);
  if (!root.IsMap()) w_.Fail(root, "the config must be a map of keys, got " + YamlWalker::Show(root));
  Keys(root, "",
       {"name",
        "description",
        "labels",
        "workspace",
        "project",
        "entrypoint",
        "hyperparameters",
        "searcher",
        "resources",
        "max_restarts",
        "min_validation_period",
        "min_checkpoint_period",
        "checkpoint_storage",
        "reproducibility",
        "environment",
        "bind_mounts",
        "data",
        "preemption_timeout",
        "log_retention_days",
        "records_per_epoch",
        "checkpoint_policy",
        "retention_policy",
        "log_policies"});
  // Determined names an unnamed experiment itself.
  Try("name", [&] {
    c.name = Present(root["name"]) ? w_.String(root["name"], "name", true) : std::string("Experiment");
  });
  Try("description", [&] {
    if (Present(root["description"])) c.description = w_.String(root["description"], "description");
  });
  Try("labels", [&] {
    const auto labels = root["labels"];
    if (!Present(labels)) return;
    if (!labels.IsSequence())
      w_.Fail(labels, "labels must be a list of strings, got " + YamlWalker::Show(labels));
    for (size_t i = 0; i < labels.size(); ++i)
      Try("labels",
          [&] { c.labels.push_back(w_.String(labels[i], "labels[" + std::to_string(i) + "]", true)); });
  });
  // Where the experiment goes, by names (the master resolves them at submit;
  // an explicit project_id wins). As in Determined, both or neither.
  Try("workspace", [&] {
    if (Present(root["workspace"])) c.workspace = w_.String(root["workspace"], "workspace", true);
  });
  Try("project", [&] {
    if (Present(root["project"])) c.project = w_.String(root["project"], "project", true);
  });
  if (Present(root["workspace"]) != Present(root["project"])) {
    const char* given = Present(root["workspace"]) ? "workspace" : "project";
    const char* missing = Present(root["workspace"]) ? "project" : "workspace";
    w_.Error(root[given], missing,
             std::string(missing) + " is required with " + given +
                 ": an experiment goes to the project named by both (or give neither for Uncategorized)");
  }
  Try("entrypoint", [&] { ParseEntrypoint(w_.Required(root, "", "entrypoint"), c); });
  Try("hyperparameters", [&] {
    const auto hp = root["hyperparameters"];
    if (!Present(hp)) return;
    for (const auto& [key, value] : w_.Entries(hp, "hyperparameters")) {
      const std::string path = "hyperparameters." + key;
      Try(path, [&, key = key, value = value] { c.hyperparameters[key] = ParseHparam(value, path, 1); });
    }
  });
  Try("records_per_epoch", [&] {
    if (Present(root["records_per_epoch"]))
      c.records_per_epoch = w_.Int(root["records_per_epoch"], "records_per_epoch", 0, "an integer >= 0");
  });
  bool searcher_ok = false;
  Try("searcher", [&] {
    const size_t errors = w_.errors().size();
    ParseSearcher(w_.Required(root, "", "searcher"), c);
    searcher_ok = w_.errors().size() == errors;
  });
  if (searcher_ok && c.searcher.name == "grid")
    for (const auto& [key, h] : c.hyperparameters)
      Try("hyperparameters." + key, [&, key = key, &h = h] {
        RequireGridCount(root["hyperparameters"][key], "hyperparameters." + key, h);
      });
  if (c.searcher.max_length) CountMaxLength(root["searcher"]["max_length"], c);
  Try("resources", [&] {
    if (Present(root["resources"])) ParseResources(root["resources"], c.resources);
  });
  Try("max_restarts", [&] {
    if (Present(root["max_restarts"]))
      c.max_restarts = w_.Int(root["max_restarts"], "max_restarts", 0, "an integer >= 0");
  });
  for (auto [key, length, batches] :
       {std::tuple{"min_validation_period", &c.min_validation_period, &c.min_validation_period_batches},
        std::tuple{"min_checkpoint_period", &c.min_checkpoint_period, &c.min_checkpoint_period_batches}}) {
    Try(key, [&, key = key, length = length, batches = batches] {
      const auto node = root[key];
      if (!Present(node)) return;
      *length = ParseLength(node, key, 0);
      std::string why;
      const auto n = ToBatches(**length, c, &why);
      if (!n)
        w_.Fail(node, std::string(key) + " in " + ToString((*length)->unit) + " needs " + why +
                          " to be counted in batches");
      *batches = *n;
    });
  }
  Try("checkpoint_storage", [&] {
    if (Present(root["checkpoint_storage"]))
      c.checkpoint_storage = ParseCheckpointStorage(root["checkpoint_storage"]);
  });
  Try("checkpoint_policy", [&] {
    const auto v = root["checkpoint_policy"];
    if (!Present(v)) return;
    const std::string policy = w_.String(v, "checkpoint_policy");
    if (policy == "best")
      c.checkpoint_policy = CheckpointPolicy::kBest;
    else if (policy == "all")
      c.checkpoint_policy = CheckpointPolicy::kAll;
    else if (policy == "none")
      c.checkpoint_policy = CheckpointPolicy::kNone;
    else
      w_.Fail(v, "checkpoint_policy must be one of best, all, none, got \"" + policy + "\"");
  });
  Try("reproducibility", [&] {
    const auto r = root["reproducibility"];
    if (!Present(r)) return;
    Keys(r, "reproducibility", {"experiment_seed"});
    if (Present(r["experiment_seed"]))
      c.experiment_seed =
          w_.Int(r["experiment_seed"], "reproducibility.experiment_seed", 0, "an integer >= 0");
  });
  Try("environment", [&] {
    if (Present(root["environment"])) ParseEnvironment(root["environment"], c.environment);
  });
  Try("bind_mounts", [&] {
    if (Present(root["bind_mounts"])) ParseBindMounts(root["bind_mounts"], c.bind_mounts);
  });
  // Without an image the trial runs on the host, where a folder is at its
  // own path: a mount to the same path already holds, another does not.
  if (!c.environment.HasImage())
    for (size_t i = 0; i < c.bind_mounts.size(); ++i) {
      const BindMount& m = c.bind_mounts[i];
      const std::string at = "bind_mounts[" + std::to_string(i) + "]";
      const YAML::Node item = root["bind_mounts"][i];
      if (m.host_path == m.container_path)
        w_.Warn(item, at,
                at + " mounts " + m.host_path +
                    " at its own path; without environment.image the trial runs on the agent's host and sees "
                    "it there");
      else
        w_.Error(item, at,
                 at + " moves " + m.host_path + " to " + m.container_path +
                     ", which needs environment.image (a container); without one the trial sees host folders "
                     "at their own paths");
    }
  Try("data", [&] {
    const auto d = root["data"];
    if (!Present(d)) return;
    w_.RequireMap(d, "data");
    c.data = w_.ToJson(d, "data");
  });
  Try("preemption_timeout", [&] {
    if (Present(root["preemption_timeout"]))
      c.preemption_timeout_s =
          w_.Int(root["preemption_timeout"], "preemption_timeout", 1, "a positive number of seconds");
  });
  const auto retention_days = [&](const YAML::Node& v, const std::string& path) {
    c.log_retention_days = w_.Int(v, path, -1, "a number of days >= 0, or -1 to keep logs");
    if (*c.log_retention_days > 32767)
      w_.Fail(v, path + " must be at most 32767, got " + YamlWalker::Show(v));
  };
  Try("log_retention_days", [&] {
    if (Present(root["log_retention_days"])) retention_days(root["log_retention_days"], "log_retention_days");
  });
  Try("retention_policy", [&] {
    const auto r = root["retention_policy"];
    if (!Present(r)) return;
    Keys(r, "retention_policy", {"log_retention_days"});
    if (Present(r["log_retention_days"]) && Present(root["log_retention_days"]))
      w_.Fail(r["log_retention_days"],
              "retention_policy.log_retention_days and log_retention_days both say how long logs are kept: "
              "give one");
    if (Present(r["log_retention_days"]))
      retention_days(r["log_retention_days"], "retention_policy.log_retention_days");
  });
  Try("log_policies", [&] {
    if (Present(root["log_policies"])) ParseLogPolicies(root["log_policies"], c.log_policies);
  });
  return c;
}

}  // namespace ring
