// The searcher section of the experiment config, with Determined 0.38's
// meaning: max_length optional for single, random and grid (the trial decides
// how long to train), time_metric/max_time for adaptive_asha, warm starts.
#include <string_view>

#include "common/config_parser.h"

namespace ring {
namespace {

// Determined's searchers that Ringmaster does not have, and what to use.
struct OtherSearcher {
  std::string_view name;
  std::string_view instead;
};
constexpr OtherSearcher kOtherSearchers[] = {
    {"async_halving", "adaptive_asha (async_halving is one bracket of it: set max_rungs and bracket_rungs)"},
    {"adaptive", "adaptive_asha (Determined removed adaptive)"},
    {"adaptive_simple", "adaptive_asha (Determined removed adaptive_simple)"},
    {"sync_halving", "adaptive_asha (Determined removed sync_halving)"},
    {"custom", "single, random, grid or adaptive_asha (custom searchers are not supported yet)"},
    {"pbt", "random or adaptive_asha (Determined removed pbt)"},
};

// Keys only adaptive_asha reads.
// (stop_once has a warning of its own whatever the searcher.)
constexpr std::string_view kAshaKeys[] = {"mode",          "divisor",     "max_rungs",
                                          "bracket_rungs", "time_metric", "max_time"};

}  // namespace

void ConfigParser::ParseSearcher(const YAML::Node& node, ExperimentConfig& c) {
  SearcherConfig& s = c.searcher;
  const std::string p = "searcher";
  w_.RequireMap(node, p);
  const auto name = w_.Required(node, p, "name");
  s.name = w_.String(name, p + ".name");
  for (const auto& other : kOtherSearchers)
    if (s.name == other.name)
      w_.Fail(name, p + ".name " + s.name + " is a Determined searcher Ringmaster does not support: use " +
                        std::string(other.instead));
  if (s.name != "single" && s.name != "grid" && s.name != "random" && s.name != "adaptive_asha")
    w_.Fail(name, p + ".name must be one of single, grid, random, adaptive_asha, got \"" + s.name + "\"");
  Keys(node, p,
       {"name", "metric", "smaller_is_better", "max_trials", "max_length", "max_concurrent_trials", "mode",
        "divisor", "max_rungs", "bracket_rungs", "time_metric", "max_time", "stop_once", "source_trial_id",
        "source_checkpoint_uuid"});
  const bool asha = s.name == "adaptive_asha";
  if (!asha)
    for (std::string_view key : kAshaKeys)
      if (const auto v = node[std::string(key)]; v && !v.IsNull())
        w_.Warn(v, p + "." + std::string(key),
                p + "." + std::string(key) + " is read only by adaptive_asha; the " + s.name +
                    " searcher ignores it");
  Try(p + ".metric", [&] { s.metric = w_.String(w_.Required(node, p, "metric"), p + ".metric", true); });
  Try(p + ".smaller_is_better", [&] {
    if (node["smaller_is_better"] && !node["smaller_is_better"].IsNull())
      s.smaller_is_better = w_.Bool(node["smaller_is_better"], p + ".smaller_is_better");
  });
  Try(p + ".max_trials", [&] {
    if (s.name == "random" || asha) w_.Required(node, p, "max_trials");
    if (node["max_trials"] && !node["max_trials"].IsNull())
      s.max_trials = w_.Int(node["max_trials"], p + ".max_trials", 1, "a positive integer");
  });
  Try(p + ".max_length", [&] {
    const auto v = node["max_length"];
    if (!v || v.IsNull()) return;
    s.max_length = ParseLength(v, p + ".max_length", 1);
  });
  s.max_concurrent_trials = kDefaultMaxConcurrentTrials;
  Try(p + ".max_concurrent_trials", [&] {
    if (node["max_concurrent_trials"] && !node["max_concurrent_trials"].IsNull())
      s.max_concurrent_trials =
          w_.Int(node["max_concurrent_trials"], p + ".max_concurrent_trials", 0, "an integer >= 0");
  });
  Try(p + ".mode", [&] {
    if (!node["mode"] || node["mode"].IsNull()) return;
    s.mode = w_.String(node["mode"], p + ".mode");
    if (s.mode != "aggressive" && s.mode != "standard" && s.mode != "conservative")
      w_.Fail(node["mode"],
              p + ".mode must be one of aggressive, standard, conservative, got \"" + s.mode + "\"");
  });
  Try(p + ".divisor", [&] {
    if (!node["divisor"] || node["divisor"].IsNull()) return;
    s.divisor = w_.Double(node["divisor"], p + ".divisor");
    if (!(s.divisor > 1))
      w_.Fail(node["divisor"],
              p + ".divisor must be greater than 1, got " + YamlWalker::Show(node["divisor"]));
  });
  Try(p + ".max_rungs", [&] {
    if (node["max_rungs"] && !node["max_rungs"].IsNull())
      s.max_rungs = w_.Int(node["max_rungs"], p + ".max_rungs", 1, "a positive integer");
  });
  Try(p + ".bracket_rungs", [&] {
    const auto v = node["bracket_rungs"];
    if (!v || v.IsNull()) return;
    if (!v.IsSequence())
      w_.Fail(v, p + ".bracket_rungs must be a list of positive integers, got " + YamlWalker::Show(v));
    // As in Determined, the list replaces the brackets mode would give; an
    // empty one (Determined's default) leaves them to mode.
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string at = p + ".bracket_rungs[" + std::to_string(i) + "]";
      Try(at, [&] {
        const int64_t rungs = w_.Int(v[i], at, 1, "a positive number of rungs");
        if (rungs > s.max_rungs)
          w_.Fail(v[i], at + " is " + std::to_string(rungs) + " rungs, more than " + p + ".max_rungs (" +
                            std::to_string(s.max_rungs) + "); raise max_rungs or give fewer rungs");
        s.bracket_rungs.push_back(rungs);
      });
    }
  });
  Try(p + ".time_metric", [&] {
    if (node["time_metric"] && !node["time_metric"].IsNull())
      s.time_metric = w_.String(node["time_metric"], p + ".time_metric", true);
  });
  Try(p + ".max_time", [&] {
    if (node["max_time"] && !node["max_time"].IsNull())
      s.max_time = w_.Int(node["max_time"], p + ".max_time", 1, "a positive integer");
  });
  // Determined 0.38 deprecated stop_once: every ASHA search stops losing
  // trials, whatever it says.
  Try(p + ".stop_once", [&] {
    const auto v = node["stop_once"];
    if (!v || v.IsNull()) return;
    w_.Bool(v, p + ".stop_once");
    w_.Warn(v, p + ".stop_once",
            p + ".stop_once is accepted and ignored, as in Determined 0.38 (which deprecated it)");
  });
  Try(p + ".source_trial_id", [&] {
    if (node["source_trial_id"] && !node["source_trial_id"].IsNull()) {
      s.source_trial_id = w_.Int(node["source_trial_id"], p + ".source_trial_id", 1, "a trial id");
      s.source_line = node["source_trial_id"].Mark().line + 1;
    }
  });
  Try(p + ".source_checkpoint_uuid", [&] {
    if (node["source_checkpoint_uuid"] && !node["source_checkpoint_uuid"].IsNull()) {
      s.source_checkpoint_uuid =
          w_.String(node["source_checkpoint_uuid"], p + ".source_checkpoint_uuid", true);
      s.source_line = node["source_checkpoint_uuid"].Mark().line + 1;
    }
  });
  if (s.source_trial_id && !s.source_checkpoint_uuid.empty())
    w_.Error(node["source_checkpoint_uuid"], p + ".source_checkpoint_uuid",
             p + ".source_trial_id and source_checkpoint_uuid both name where to start: give one");
  if (asha) {
    const bool by_time = s.time_metric.has_value() || s.max_time > 0;
    if (by_time && s.max_length)
      w_.Error(
          node["max_length"], p + ".max_length",
          p + ".max_length and time_metric/max_time both say how long trials train: give max_length "
              "(trials ask for searcher operations) or time_metric and max_time (trials report time_metric)");
    else if (by_time && !s.time_metric)
      w_.Error(node, p + ".time_metric", p + ".time_metric is required with max_time");
    else if (by_time && s.max_time <= 0)
      w_.Error(node, p + ".max_time", p + ".max_time is required with time_metric");
    else if (!by_time && !s.max_length && !node["max_length"])
      w_.Error(node, p + ".max_time",
               p + ".max_time and time_metric are required by adaptive_asha (or the older max_length)");
  }
}

}  // namespace ring
