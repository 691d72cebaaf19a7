#include "tests/e2e/digits_harness.h"

#include <filesystem>

namespace ring::testing::digits {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string WhyNotRunnable() {
  if (!RING_HAVE_TORCH)
    return "this build has no libtorch (CMake did not find Torch; Debian: libtorch-dev), so the "
           "digits-libtorch example was not built";
  if (!fs::exists(kData)) return std::string(kData) + " is missing (Debian: python3-sklearn)";
  return "";
}

std::string ModelDir() {
  return BinDir() + "/../examples/digits-libtorch/model";
}

std::map<int64_t, nlohmann::json> Values(const nlohmann::json& records) {
  std::map<int64_t, nlohmann::json> values;
  for (const auto& r : records) values[r["batches"].get<int64_t>()] = r["metrics"];
  return values;
}

int64_t Submit(TestCluster& cluster, const std::string& config, const std::string& model) {
  auto created = cluster.Ring({"--json", "experiment", "create", config, model});
  EXPECT_EQ(created.exit_code, 0) << created.out << created.err;
  return nlohmann::json::parse(created.out, nullptr, false).value("id", int64_t{0});
}

void WaitCompleted(TestCluster& cluster, int64_t exp) {
  auto waited = cluster.Ring({"experiment", "wait", std::to_string(exp)});
  ASSERT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  auto state = cluster.GetJson("/api/v1/experiments/" + std::to_string(exp));
  EXPECT_EQ(state["state"], "COMPLETED") << state.dump();
}

int64_t TrialOf(TestCluster& cluster, int64_t exp) {
  auto trials = cluster.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
  return trials.empty() ? 0 : trials[0]["id"].get<int64_t>();
}

Outcome Result(TestCluster& cluster, int64_t exp) {
  Outcome out;
  out.trial = TrialOf(cluster, exp);
  const std::string base = "/api/v1/trials/" + std::to_string(out.trial);
  const auto trial = cluster.GetJson(base);
  EXPECT_EQ(trial["state"], "COMPLETED") << trial.dump();
  out.length = trial["total_batches"].get<int64_t>();
  out.validation = cluster.GetJson(base + "/metrics?kind=validation")["metrics"];
  out.training = cluster.GetJson(base + "/metrics?kind=training")["metrics"];
  for (const auto* kind : {&out.validation, &out.training}) {
    std::set<int64_t> seen;
    for (const auto& m : *kind)
      EXPECT_TRUE(seen.insert(m["batches"].get<int64_t>()).second) << "stored twice";
  }
  // Agents ship log lines in batches, so the last ones may arrive after the
  // trial ended: read until both ranks' final lines are there.
  const std::regex done(R"(digits: rank (\d) done at batch (\d+); parameters ([0-9a-f]{16}))");
  auto read_logs = [&] {
    out.joined.clear();
    out.stopped.clear();
    out.digests.clear();
    const auto logs = cluster.GetJson(base + "/logs?limit=10000");  // kept alive for the loop
    for (const auto& l : logs["logs"]) {
      const std::string line = l["line"];
      const int rank = l["rank"];
      if (line.rfind("digits: rank " + std::to_string(rank) + " of 2 (gloo)", 0) == 0)
        out.joined.insert(rank);
      if (line.rfind("digits: asked to stop", 0) == 0) out.stopped.insert(rank);
      std::smatch m;
      if (std::regex_search(line, m, done)) {
        EXPECT_EQ(std::stoi(m[1]), rank) << line;
        if (std::stoll(m[2]) == out.length) out.digests[rank] = m[3];
      }
    }
    return out.digests.size() == 2;
  };
  TestCluster::WaitFor(read_logs, 15s);
  return out;
}

std::string Config(TestCluster& cluster, const std::string& name, const ConfigOptions& options) {
  return cluster.WriteFile(
      name + ".yaml",
      "name: " + name + "\nentrypoint: '" + options.entrypoint +
          "'\n"
          "hyperparameters:\n  learning_rate: 0.05\n  batch_size: 32\n  momentum: 0.9\n  dropout: 0.1\n"
          "  report_every: 10\n" +
          options.hparams +
          "searcher:\n  name: single\n  metric: validation_accuracy\n  smaller_is_better: false\n"
          "  max_length:\n    batches: 200\n"
          "resources:\n  slots_per_trial: 2\n"
          "reproducibility:\n  experiment_seed: 7\n"
          "max_restarts: " +
          std::to_string(options.max_restarts) + "\nmin_checkpoint_period:\n  batches: 50\n" + options.extra);
}

}  // namespace ring::testing::digits
