// `ring preview-search`: the simulated plan of each searcher, in text and
// JSON, and clear errors for bad configs. No master is involved.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/run_cli.h"
#include "tests/unit/cli/cli_result.h"

namespace ring::cli {
namespace {

class CliPreviewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("preview-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  static CliResult Run(std::vector<std::string> args) {
    // Point at a master nobody listens on: preview must not need one.
    args.insert(args.begin(), {"-m", "http://127.0.0.1:1"});
    return RunRing(std::move(args));
  }
  std::filesystem::path dir_;
};

std::string Config(const std::string& searcher, const std::string& hparams =
                                                    "  lr:\n    type: log\n"
                                                    "    minval: -3\n    maxval: -1\n") {
  return "name: p\nentrypoint: x\nhyperparameters:\n" + hparams + "searcher:\n" + searcher;
}

TEST_F(CliPreviewTest, AshaPlanShowsRungsAndTheSavingOverFullTraining) {
  auto path = Write("asha.yaml", Config("  name: adaptive_asha\n  metric: loss\n  max_trials: 16\n"
                                        "  max_concurrent_trials: 4\n  max_length:\n    batches: 800\n"
                                        "  mode: aggressive\n  divisor: 4\n  max_rungs: 3\n"));
  auto r = Run({"preview-search", path});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("adaptive_asha (mode aggressive, divisor 4, max_rungs 3): 16 trials"),
            std::string::npos)
      << r.out;
  for (const char* length : {"50 ", "200 ", "800 "})
    EXPECT_NE(r.out.find(length), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of training all 16 trials to 800 batches (12,800 batches)"), std::string::npos)
      << r.out;

  auto j = Run({"--json", "preview-search", path});
  ASSERT_EQ(j.code, 0) << j.err;
  auto plan = nlohmann::json::parse(j.out);
  EXPECT_EQ(plan["trials"], 16);
  EXPECT_EQ(plan["full_batches"], 16 * 800);
  EXPECT_TRUE(plan["finished"]);
  EXPECT_LT(plan["total_batches"].get<int64_t>(), 16 * 800 / 2);
  ASSERT_EQ(plan["rungs"].size(), 3u);
  EXPECT_EQ(plan["rungs"][0]["length"], 50);
  EXPECT_EQ(plan["rungs"][0]["trials"], 16);  // every trial trains the first rung
  EXPECT_EQ(plan["rungs"][2]["length"], 800);
  int64_t from_rungs = 0, previous = 0;
  for (const auto& rung : plan["rungs"]) {
    from_rungs += rung["trials"].get<int64_t>() * (rung["length"].get<int64_t>() - previous);
    previous = rung["length"].get<int64_t>();
  }
  EXPECT_EQ(from_rungs, plan["total_batches"]);  // one bracket: the rungs add up to the total

  // The same seed gives the same plan.
  EXPECT_EQ(Run({"--json", "preview-search", path}).out, j.out);
}

// searcher.bracket_rungs gives the brackets, whatever mode would.
TEST_F(CliPreviewTest, AshaBracketRungsAreTheBrackets) {
  auto path = Write("brackets.yaml", Config("  name: adaptive_asha\n  metric: loss\n  max_trials: 16\n"
                                            "  max_length: 256\n  mode: aggressive\n  divisor: 4\n"
                                            "  bracket_rungs: [2, 4]\n"));
  auto r = Run({"preview-search", path});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("adaptive_asha (bracket_rungs [2, 4], divisor 4): 16 trials in 2 brackets"),
            std::string::npos)
      << r.out;
  auto j = Run({"--json", "preview-search", path});
  ASSERT_EQ(j.code, 0) << j.err;
  // The first rung of each bracket: 256 / 4^3 for four rungs, 256 / 4 for two.
  std::map<int64_t, int64_t> first_length;
  const auto plan = nlohmann::json::parse(j.out);
  for (const auto& rung : plan["rungs"])
    if (rung["rung"].get<int64_t>() == 0)
      first_length[rung["bracket"].get<int64_t>()] = rung["length"].get<int64_t>();
  EXPECT_EQ(first_length, (std::map<int64_t, int64_t>{{0, 4}, {1, 64}})) << j.out;
}

TEST_F(CliPreviewTest, GridAndRandomTrainEveryTrialFully) {
  auto grid = Write("grid.yaml", Config("  name: grid\n  metric: loss\n  max_length:\n    batches: 100\n",
                                        "  lr:\n    type: log\n    minval: -3\n    maxval: -1\n    count: 3\n"
                                        "  opt:\n    type: categorical\n    vals: [sgd, adam]\n"));
  auto g = Run({"--json", "preview-search", grid});
  ASSERT_EQ(g.code, 0) << g.err;
  auto plan = nlohmann::json::parse(g.out);
  EXPECT_EQ(plan["trials"], 6);
  EXPECT_EQ(plan["total_batches"], 600);
  EXPECT_EQ(plan["full_batches"], 600);

  auto random = Write("random.yaml", Config("  name: random\n  metric: loss\n  max_trials: 5\n"
                                            "  max_length:\n    batches: 40\n"));
  auto r = Run({"preview-search", random});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Total: 200 batches, 100.0% of training all 5 trials"), std::string::npos) << r.out;
}

TEST_F(CliPreviewTest, TrialDrivenAshaShowsRungsInTimeMetricUnits) {
  // Rungs at 50, 200 and 800 epochs (max_time 800, divisor 4): trials are
  // stopped, not promoted; the plan names the contract.
  auto path = Write("asha-time.yaml", Config("  name: adaptive_asha\n  metric: loss\n  max_trials: 16\n"
                                             "  max_concurrent_trials: 4\n  time_metric: epochs\n"
                                             "  max_time: 800\n  mode: aggressive\n  divisor: 4\n"
                                             "  max_rungs: 3\n"));
  auto r = Run({"preview-search", path});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("max_time 800 epochs (time_metric epochs)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Contract: trial-driven"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stopped through preemption"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("at (epochs)"), std::string::npos) << r.out;
  auto j = Run({"--json", "preview-search", path});
  ASSERT_EQ(j.code, 0) << j.err;
  auto plan = nlohmann::json::parse(j.out);
  EXPECT_EQ(plan["trials"], 16);
  EXPECT_EQ(plan["contract"], "trial_driven");
  EXPECT_EQ(plan["unit"], "epochs");
  EXPECT_TRUE(plan["finished"]);
  ASSERT_EQ(plan["rungs"].size(), 3u) << plan.dump();
  EXPECT_EQ(plan["rungs"][0]["length"], 50);
  EXPECT_EQ(plan["rungs"][0]["trials"], 16);
  EXPECT_EQ(plan["rungs"][1]["length"], 200);
  EXPECT_EQ(plan["rungs"][2]["length"], 800);
  EXPECT_LT(plan["rungs"][2]["trials"].get<int64_t>(), 16);
  EXPECT_LT(plan["total_batches"].get<int64_t>(), 16 * 800 / 2);

  // The operations contract says so too.
  auto ops = Write("asha-ops.yaml", Config("  name: adaptive_asha\n  metric: loss\n  max_trials: 4\n"
                                           "  max_length:\n    batches: 64\n"));
  auto o = Run({"preview-search", ops});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("Contract: operations"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("train to (batches)"), std::string::npos) << o.out;

  // No max_length: the trials decide how long they train.
  auto single = Write("single.yaml", Config("  name: single\n  metric: loss\n"));
  auto s = Run({"preview-search", single});
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_NE(s.out.find("The trials decide how long they train: 1 trial"), std::string::npos) << s.out;
}

TEST_F(CliPreviewTest, BadConfigsAreNamedWithTheirLine) {
  auto bad = Write("bad.yaml", Config("  name: grid\n  metric: loss\n  max_length:\n    batches: 100\n"));
  auto r = Run({"preview-search", bad});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("bad.yaml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("count"), std::string::npos) << r.err;

  auto missing = Run({"preview-search", (dir_ / "nope.yaml").string()});
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.err.find("nope.yaml"), std::string::npos) << missing.err;
  EXPECT_EQ(Run({"preview-search"}).code, 2);  // usage
}

}  // namespace
}  // namespace ring::cli
