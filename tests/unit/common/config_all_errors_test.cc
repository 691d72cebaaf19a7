// A config with many problems is answered with all of them at once, each with
// its key path and line; near-miss hints only name keys of the same meaning;
// Determined's keys are supported, warned about or refused by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/experiment_config.h"

namespace ring {
namespace {

// A Determined config with twenty problems, one per numbered line.
const char* kTwentyProblems =
    "name: \"\"\n"                                                // 1
    "entrypoint: []\n"                                            // 2
    "max_restarts: -1\n"                                          // 3
    "records_per_epoch: lots\n"                                   // 4
    "min_validation_period: {epochs: 1}\n"                        // 5
    "checkpoint_policy: sometimes\n"                              // 6
    "searcher:\n"                                                 // 7
    "  name: adaptive_asha\n"                                     // 8
    "  metric: loss\n"                                            // 9
    "  max_trials: 0\n"                                           // 10
    "  max_length: {batches: 0}\n"                                // 11
    "  divisor: 1\n"                                              // 12
    "  mode: fast\n"                                              // 13
    "  bracket_rungs: [0]\n"                                      // 14
    "resources:\n"                                                // 15
    "  slots_per_trial: 0\n"                                      // 16
    "  priority: 100\n"                                           // 17
    "  launch: per_gpu\n"                                         // 18
    "environment:\n"                                              // 19
    "  image: {cpu: pytorch, tpu: jax}\n"                         // 20
    "  environment_variables: [NOEQUALS]\n"                       // 21
    "hyperparameters:\n"                                          // 22
    "  lr: {type: double, minval: 1, maxval: 0}\n"                // 23
    "checkpoint_storage: {type: s3, bucket: b}\n"                 // 24
    "log_policies: [{pattern: \"(\", action: cancel_retries}]\n"  // 25
    "bind_mounts: [{host_path: data, container_path: /data}]\n";  // 26

TEST(ConfigAllErrorsTest, TwentyProblemsAreReportedInOneAnswer) {
  const ConfigCheck check = CheckExperimentConfig(kTwentyProblems);
  std::vector<std::pair<int, std::string>> expected = {
      {1, "name"},
      {2, "entrypoint"},
      {3, "max_restarts"},
      {4, "records_per_epoch"},
      {5, "min_validation_period"},
      {6, "checkpoint_policy"},
      {10, "searcher.max_trials"},
      {11, "searcher.max_length"},
      {12, "searcher.divisor"},
      {13, "searcher.mode"},
      {14, "searcher.bracket_rungs"},
      {16, "resources.slots_per_trial"},
      {17, "resources.priority"},
      {18, "resources.launch"},
      {20, "environment.image"},
      {21, "environment.environment_variables[0]"},
      {23, "hyperparameters.lr"},
      {24, "checkpoint_storage"},
      {25, "log_policies[0]"},
      {26, "bind_mounts"},
  };
  std::string all;
  for (const auto& e : check.errors) all += e.Text("experiment.yaml") + "\n";
  ASSERT_EQ(check.errors.size(), 20u) << all;
  // Every line above has its error, which names the key.
  for (const auto& [line, path] : expected) {
    bool found = false;
    for (const auto& e : check.errors)
      found = found || (e.line == line && e.message.find(path) != std::string::npos);
    EXPECT_TRUE(found) << "no error on line " << line << " naming " << path << "\n" << all;
  }
  EXPECT_FALSE(check.config);
  // The one Result error carries them all, one per line.
  auto parsed = ParseExperimentConfig(kTwentyProblems);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_EQ(std::count(parsed.status().message().begin(), parsed.status().message().end(), '\n'), 19);
}

TEST(ConfigAllErrorsTest, HintsOnlyForKeysOfTheSameMeaning) {
  const std::string head = "name: x\nentrypoint: ./run\n";
  // time_metric and max_time are keys of their own now, not misspellings.
  auto ok = CheckExperimentConfig(head +
                                  "searcher: {name: adaptive_asha, metric: loss, max_trials: 4, "
                                  "time_metric: batches, max_time: 100}\n");
  EXPECT_TRUE(ok.errors.empty()) << ok.ErrorText();
  ASSERT_TRUE(ok.config);
  EXPECT_EQ(ok.config->searcher.time_metric, "batches");
  EXPECT_EQ(ok.config->searcher.max_time, 100);
  // A real typo is hinted; a different word is not.
  auto typo = CheckExperimentConfig(head + "searcher: {name: single, metric: loss, max_trails: 3}\n");
  EXPECT_NE(typo.ErrorText().find("unknown key \"searcher.max_trails\" (did you mean \"max_trials\"?)"),
            std::string::npos)
      << typo.ErrorText();
  auto other = CheckExperimentConfig(head + "searcher: {name: single, metric: loss, max_timer: 3}\n");
  EXPECT_NE(other.ErrorText().find("unknown key \"searcher.max_timer\" (did you mean \"max_time\"?)"),
            std::string::npos)
      << other.ErrorText();
  auto far = CheckExperimentConfig(head + "searcher: {name: single, metric: loss, time_limit: 3}\n");
  EXPECT_EQ(far.ErrorText().find("did you mean"), std::string::npos) << far.ErrorText();
}

TEST(ConfigAllErrorsTest, DeterminedKeysAreSupportedWarnedOrRefused) {
  const char* yaml =
      "name: x\n"
      "entrypoint: [python3, -m, determined.launch.torch_distributed, python3, train.py]\n"
      "debug: false\n"
      "profiling: {enabled: true}\n"
      "records_per_epoch: 1000\n"
      "hyperparameters:\n"
      "  global_batch_size: 100\n"
      "  wandb: null\n"
      "searcher: {name: single, metric: loss, max_length: {epochs: 2}}\n"
      "min_validation_period: {records: 500}\n"
      "environment:\n"
      "  environment_variables:\n"
      "    cpu: [A=1]\n"
      "    cuda: [B=2]\n"
      "  variables: {C: '3'}\n"
      "checkpoint_storage: {save_trial_latest: 3}\n"
      "retention_policy: {log_retention_days: 7}\n"
      "log_policies:\n"
      "  - {name: oom, pattern: '.*CUDA out of memory.*', action: cancel_retries}\n"
      "  - {pattern: 'ECC error', action: {type: exclude_node}}\n"
      "data: {url: 'https://example.com/x.tgz'}\n"
      "labels: [a, b]\n"
      "description: d\n";
  const ConfigCheck check = CheckExperimentConfig(yaml);
  ASSERT_TRUE(check.errors.empty()) << check.ErrorText();
  const ExperimentConfig& c = *check.config;
  EXPECT_EQ(c.entrypoint_argv.size(), 5u);
  EXPECT_EQ(c.entrypoint, "python3 -m determined.launch.torch_distributed python3 train.py");
  EXPECT_EQ(ResolveLaunchMode(c.resources.launch, LaunchMode::kAuto, c.entrypoint), LaunchMode::kPerNode);
  EXPECT_TRUE(c.hyperparameters.at("wandb").value.is_null());
  EXPECT_EQ(c.searcher.max_length_batches, 20);  // 2 epochs of 1000 records, 100 a batch
  EXPECT_EQ(c.min_validation_period_batches, 5);
  EXPECT_EQ(c.environment.cpu_variables.at("A"), "1");
  EXPECT_EQ(c.environment.cuda_variables.at("B"), "2");
  EXPECT_EQ(c.environment.variables.at("C"), "3");
  ASSERT_TRUE(c.checkpoint_storage);
  EXPECT_TRUE(c.checkpoint_storage->host_path.empty());  // merged with the master's
  EXPECT_EQ(c.checkpoint_storage->save_trial_latest, 3);
  EXPECT_EQ(c.log_retention_days, 7);
  ASSERT_EQ(c.log_policies.size(), 2u);
  EXPECT_EQ(c.log_policies[0].action, LogPolicy::Action::kCancelRetries);
  EXPECT_EQ(c.log_policies[1].action, LogPolicy::Action::kExcludeNode);
  EXPECT_EQ(c.data["url"], "https://example.com/x.tgz");
  EXPECT_EQ(c.searcher.max_concurrent_trials, 16);
  // debug and profiling are accepted with a warning each.
  ASSERT_EQ(check.warnings.size(), 2u);
  EXPECT_EQ(check.warnings[0].path, "debug");
  EXPECT_EQ(check.warnings[0].line, 3);
  EXPECT_EQ(check.warnings[1].path, "profiling");
}

// workspace and project place the experiment (both or neither); slurm is
// set on a Slurm pool, so refused unless empty; pbs and integrations are
// warned about with what Ringmaster has instead.
TEST(ConfigAllErrorsTest, PlacementSlurmPbsAndIntegrationKeys) {
  const std::string head = "name: x\nentrypoint: ./run\nsearcher: {name: single, metric: loss}\n";
  const ConfigCheck placed = CheckExperimentConfig(head + "workspace: cv\nproject: mnist\n");
  ASSERT_TRUE(placed.errors.empty()) << placed.ErrorText();
  EXPECT_TRUE(placed.warnings.empty());
  EXPECT_EQ(placed.config->workspace, "cv");
  EXPECT_EQ(placed.config->project, "mnist");
  const ConfigCheck alone = CheckExperimentConfig(head + "project: mnist\n");
  ASSERT_EQ(alone.errors.size(), 1u);
  EXPECT_EQ(alone.errors[0].path, "workspace");
  EXPECT_EQ(alone.errors[0].line, 4);
  EXPECT_NE(alone.errors[0].message.find("workspace is required with project"), std::string::npos);

  const ConfigCheck slurm = CheckExperimentConfig(head + "slurm: {sbatch_args: [--time=1:00:00]}\n");
  ASSERT_EQ(slurm.errors.size(), 1u);
  EXPECT_EQ(slurm.errors[0].path, "slurm");
  EXPECT_EQ(slurm.errors[0].line, 4);
  EXPECT_NE(slurm.errors[0].message.find("resource_pools[].resource_manager.sbatch_args"), std::string::npos)
      << slurm.errors[0].message;
  const ConfigCheck empty_slurm = CheckExperimentConfig(head + "slurm: {}\n");
  EXPECT_TRUE(empty_slurm.errors.empty()) << empty_slurm.ErrorText();
  ASSERT_EQ(empty_slurm.warnings.size(), 1u);

  const ConfigCheck warned =
      CheckExperimentConfig(head + "pbs: {pbsbatch_args: [-l walltime=1:00:00]}\nintegrations: {}\n");
  ASSERT_TRUE(warned.errors.empty()) << warned.ErrorText();
  ASSERT_EQ(warned.warnings.size(), 2u);
  EXPECT_NE(warned.warnings[0].message.find("no PBS resource manager"), std::string::npos);
  EXPECT_NE(warned.warnings[1].message.find("ring webhook create"), std::string::npos);
}

// bracket_rungs: each a positive number of rungs, at most max_rungs; an
// empty list leaves the brackets to mode, as in Determined. stop_once is
// accepted and ignored with a warning, whatever the searcher.
TEST(ConfigAllErrorsTest, BracketRungsAndStopOnce) {
  const std::string head =
      "name: x\nentrypoint: ./run\nsearcher:\n  name: adaptive_asha\n  metric: loss\n"
      "  max_trials: 16\n  max_length: 256\n";
  const ConfigCheck ok = CheckExperimentConfig(head + "  bracket_rungs: [2, 4]\n");
  ASSERT_TRUE(ok.errors.empty()) << ok.ErrorText();
  EXPECT_EQ(ok.config->searcher.bracket_rungs, (std::vector<int64_t>{2, 4}));
  const ConfigCheck empty = CheckExperimentConfig(head + "  bracket_rungs: []\n");
  ASSERT_TRUE(empty.errors.empty()) << empty.ErrorText();
  EXPECT_TRUE(empty.config->searcher.bracket_rungs.empty());

  const ConfigCheck bad = CheckExperimentConfig(head + "  bracket_rungs: [0, 6, -2]\n");
  ASSERT_EQ(bad.errors.size(), 3u) << bad.ErrorText();
  EXPECT_EQ(bad.errors[0].path, "searcher.bracket_rungs[0]");
  EXPECT_EQ(bad.errors[0].line, 8);
  EXPECT_EQ(bad.errors[1].path, "searcher.bracket_rungs[1]");
  EXPECT_NE(bad.errors[1].message.find("more than searcher.max_rungs (5)"), std::string::npos)
      << bad.errors[1].message;
  EXPECT_EQ(bad.errors[2].path, "searcher.bracket_rungs[2]");
  const ConfigCheck raised = CheckExperimentConfig(head + "  max_rungs: 6\n  bracket_rungs: [6]\n");
  EXPECT_TRUE(raised.errors.empty()) << raised.ErrorText();
  const ConfigCheck scalar = CheckExperimentConfig(head + "  bracket_rungs: 3\n");
  ASSERT_EQ(scalar.errors.size(), 1u);
  EXPECT_EQ(scalar.errors[0].path, "searcher.bracket_rungs");

  for (const char* name : {"adaptive_asha", "single"}) {
    const std::string yaml = std::string("name: x\nentrypoint: ./run\nsearcher:\n  name: ") + name +
                             "\n  metric: loss\n  max_trials: 16\n  max_length: 256\n  stop_once: true\n";
    const ConfigCheck once = CheckExperimentConfig(yaml);
    ASSERT_TRUE(once.errors.empty()) << once.ErrorText();
    ASSERT_EQ(once.warnings.size(), 1u) << name;
    EXPECT_EQ(once.warnings[0].path, "searcher.stop_once");
    EXPECT_EQ(once.warnings[0].line, 8);
    EXPECT_NE(once.warnings[0].message.find("accepted and ignored, as in Determined 0.38"),
              std::string::npos);
  }
}

TEST(ConfigAllErrorsTest, SingleRandomGridNeedNoMaxLength) {
  for (const char* name : {"single", "random", "grid"}) {
    const std::string yaml = std::string("name: x\nentrypoint: ./run\nsearcher: {name: ") + name +
                             ", metric: loss, max_trials: 2}\n";
    const ConfigCheck check = CheckExperimentConfig(yaml);
    EXPECT_TRUE(check.errors.empty()) << name << ": " << check.ErrorText();
  }
  const ConfigCheck asha = CheckExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher: {name: adaptive_asha, metric: l, max_trials: 2}\n");
  ASSERT_EQ(asha.errors.size(), 1u);
  EXPECT_NE(asha.errors[0].message.find("max_time and time_metric are required"), std::string::npos);
}

// An epoch length without records_per_epoch (or without a constant
// global_batch_size) cannot be counted in batches: refused under
// adaptive_asha, which plans rungs with it, a warning elsewhere. Both name
// the key that is missing.
TEST(ConfigAllErrorsTest, UncountableMaxLengthNamesTheMissingKey) {
  const ConfigCheck single = CheckExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  metric: l\n  max_length: {epochs: 20}\n");
  ASSERT_TRUE(single.errors.empty()) << single.ErrorText();
  ASSERT_EQ(single.warnings.size(), 1u);
  EXPECT_EQ(single.warnings[0].path, "searcher.max_length");
  EXPECT_EQ(single.warnings[0].line, 6);
  EXPECT_NE(single.warnings[0].message.find("needs records_per_epoch"), std::string::npos)
      << single.warnings[0].message;
  EXPECT_EQ(single.config->searcher.max_length_batches, 0);

  const ConfigCheck asha = CheckExperimentConfig(
      "name: x\nentrypoint: ./run\nrecords_per_epoch: 100\nsearcher:\n  name: adaptive_asha\n  metric: l\n"
      "  max_trials: 4\n  max_length: {epochs: 20}\n");
  ASSERT_FALSE(asha.errors.empty());
  EXPECT_EQ(asha.errors[0].path, "searcher.max_length");
  EXPECT_NE(asha.errors[0].message.find("needs a constant hyperparameters.global_batch_size"),
            std::string::npos)
      << asha.ErrorText();

  // Counted: the unit's conversion is kept for the searcher.
  const ConfigCheck counted = CheckExperimentConfig(
      "name: x\nentrypoint: ./run\nrecords_per_epoch: 100\nhyperparameters: {global_batch_size: 10}\n"
      "searcher: {name: single, metric: l, max_length: {epochs: 3}}\n");
  ASSERT_TRUE(counted.errors.empty()) << counted.ErrorText();
  EXPECT_TRUE(counted.warnings.empty());
  EXPECT_EQ(counted.config->searcher.max_length_batches, 30);
  EXPECT_EQ(counted.config->searcher.records_per_unit, 100);
  EXPECT_EQ(counted.config->searcher.global_batch_size, 10);
}

}  // namespace
}  // namespace ring
