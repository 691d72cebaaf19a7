// The experiment config parser: every key of the contract, and malformed
// configs whose errors must name the key path and the YAML line exactly.
#include "common/experiment_config.h"

#include <gtest/gtest.h>

namespace ring {
namespace {

const char* kFull = R"(name: mnist
description: a full config
labels: [vision, baseline]
entrypoint: python3 train.py
hyperparameters:
  learning_rate: 0.01
  layers: [64, 64]
  batch_size: {type: const, val: 32}
  width: {type: int, minval: 16, maxval: 129, count: 4}
  dropout: {type: double, minval: 0.0, maxval: 0.5}
  weight_decay: {type: log, base: 10, minval: -6, maxval: -2, count: 3}
  optimizer: {type: categorical, vals: [sgd, adam]}
  model:
    depth: {type: int, minval: 2, maxval: 8}
    activation: relu
searcher:
  name: adaptive_asha
  metric: accuracy
  smaller_is_better: false
  max_trials: 16
  max_length:
    batches: 1000
  max_concurrent_trials: 4
  mode: aggressive
  divisor: 3
  max_rungs: 4
resources:
  slots_per_trial: 2
  resource_pool: gpus
  priority: 10
  weight: 2.5
  max_slots: 8
max_restarts: 2
min_validation_period:
  batches: 100
min_checkpoint_period:
  batches: 200
checkpoint_storage:
  type: shared_fs
  host_path: /mnt/ckpt
  storage_path: team-a
  save_experiment_best: 1
  save_trial_best: 2
  save_trial_latest: 1
reproducibility:
  experiment_seed: 42
environment:
  variables:
    OMP_NUM_THREADS: 1
    DATA: /data
data:
  url: file:///data/mnist
  shards: 4
preemption_timeout: 120
)";

TEST(ExperimentConfigTest, FullConfigParsesEveryKey) {
  auto c = ParseExperimentConfig(kFull);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name, "mnist");
  EXPECT_EQ(c->description, "a full config");
  EXPECT_EQ(c->labels, (std::vector<std::string>{"vision", "baseline"}));
  EXPECT_EQ(c->entrypoint, "python3 train.py");
  using T = Hyperparameter::Type;
  const auto& hp = c->hyperparameters;
  EXPECT_EQ(hp.at("learning_rate").type, T::kConst);
  EXPECT_EQ(hp.at("learning_rate").value, 0.01);
  EXPECT_EQ(hp.at("layers").value, nlohmann::json({64, 64}));
  EXPECT_EQ(hp.at("batch_size").value, 32);
  EXPECT_EQ(hp.at("width").type, T::kInt);
  EXPECT_EQ(hp.at("width").minval, 16);
  EXPECT_EQ(hp.at("width").maxval, 129);
  EXPECT_EQ(hp.at("width").count, 4);
  EXPECT_EQ(hp.at("dropout").type, T::kDouble);
  EXPECT_EQ(hp.at("weight_decay").type, T::kLog);
  EXPECT_EQ(hp.at("weight_decay").base, 10);
  EXPECT_EQ(hp.at("optimizer").vals, (std::vector<nlohmann::json>{"sgd", "adam"}));
  EXPECT_EQ(hp.at("model").type, T::kNested);
  EXPECT_EQ(hp.at("model").nested.at("activation").value, "relu");
  EXPECT_EQ(c->searcher.name, "adaptive_asha");
  EXPECT_EQ(c->searcher.metric, "accuracy");
  EXPECT_FALSE(c->searcher.smaller_is_better);
  EXPECT_EQ(c->searcher.max_trials, 16);
  EXPECT_EQ(c->searcher.max_length_batches, 1000);
  EXPECT_EQ(c->searcher.max_concurrent_trials, 4);
  EXPECT_EQ(c->searcher.mode, "aggressive");
  EXPECT_EQ(c->searcher.divisor, 3);
  EXPECT_EQ(c->searcher.max_rungs, 4);
  EXPECT_EQ(c->resources.slots_per_trial, 2);
  EXPECT_EQ(c->resources.resource_pool, "gpus");
  EXPECT_EQ(c->resources.priority, 10);
  EXPECT_EQ(c->resources.weight, 2.5);
  EXPECT_EQ(c->resources.max_slots, 8);
  EXPECT_EQ(c->max_restarts, 2);
  EXPECT_EQ(c->min_validation_period_batches, 100);
  EXPECT_EQ(c->min_checkpoint_period_batches, 200);
  ASSERT_TRUE(c->checkpoint_storage.has_value());
  EXPECT_EQ(c->checkpoint_storage->host_path, "/mnt/ckpt");
  EXPECT_EQ(c->checkpoint_storage->storage_path, "team-a");
  EXPECT_EQ(c->checkpoint_storage->save_trial_best, 2);
  EXPECT_EQ(c->experiment_seed, 42);
  EXPECT_EQ(c->environment_variables.at("OMP_NUM_THREADS"), "1");
  EXPECT_EQ(c->data["shards"], 4);
  EXPECT_EQ(c->preemption_timeout_s, 120);
}

TEST(ExperimentConfigTest, DefaultsOfAMinimalConfig) {
  auto c = ParseExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  metric: loss\n  max_length: {batches: 10}\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->resources.slots_per_trial, 1);
  EXPECT_EQ(c->resources.resource_pool, "default");
  EXPECT_EQ(c->max_restarts, 5);
  EXPECT_TRUE(c->searcher.smaller_is_better);
  EXPECT_FALSE(c->checkpoint_storage.has_value());
  EXPECT_TRUE(c->hyperparameters.empty());
}

TEST(ExperimentConfigTest, EnvironmentVariablesAsAList) {
  auto c = ParseExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher: {name: single, metric: l, max_length: {batches: 1}}\n"
      "environment:\n  variables:\n    - A=1\n    - B=x=y\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->environment_variables.at("A"), "1");
  EXPECT_EQ(c->environment_variables.at("B"), "x=y");
}

// The head of a valid config; each case appends or replaces lines after it.
const std::string kHead =
    "name: x\n"            // 1
    "entrypoint: ./run\n"  // 2
    "searcher:\n"          // 3
    "  name: single\n"     // 4
    "  metric: loss\n"     // 5
    "  max_length:\n"      // 6
    "    batches: 10\n";   // 7

struct BadConfig {
  const char* what;
  std::string yaml;
  std::string message;
};

class MalformedConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(MalformedConfigTest, ErrorNamesPathAndLine) {
  const auto& p = GetParam();
  auto c = ParseExperimentConfig(p.yaml);
  ASSERT_FALSE(c.ok()) << p.what;
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_EQ(c.status().message(), p.message) << p.what;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedConfigTest,
    ::testing::Values(
        BadConfig{"string for an int", kHead + "max_restarts: ten\n",
                  "experiment.yaml:8: max_restarts must be an integer >= 0, got \"ten\""},
        BadConfig{"negative count", kHead + "max_restarts: -1\n",
                  "experiment.yaml:8: max_restarts must be an integer >= 0, got -1"},
        BadConfig{"unknown top-level key", kHead + "serhcer: {}\n",
                  "experiment.yaml:8: unknown key \"serhcer\" (did you mean \"searcher\"?)"},
        BadConfig{"unknown nested key", kHead + "  max_lenght: 5\n",
                  "experiment.yaml:8: unknown key \"searcher.max_lenght\" (did you mean \"max_length\"?)"},
        BadConfig{"unknown key of an int hyperparameter",
                  kHead + "hyperparameters:\n  lr: {type: int, minval: 1, maxval: 2, step: 1}\n",
                  "experiment.yaml:9: unknown key \"hyperparameters.lr.step\""},
        BadConfig{"missing entrypoint",
                  "name: x\nsearcher: {name: single, metric: l, max_length: {batches: 1}}\n",
                  "experiment.yaml:1: entrypoint is required"},
        BadConfig{"missing name",
                  "entrypoint: x\nsearcher: {name: single, metric: l, max_length: {batches: 1}}\n",
                  "experiment.yaml:1: name is required"},
        BadConfig{"missing searcher", "name: x\nentrypoint: ./run\n",
                  "experiment.yaml:1: searcher is required"},
        BadConfig{"missing metric",
                  "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  max_length: {batches: 1}\n",
                  "experiment.yaml:4: searcher.metric is required"},
        BadConfig{"missing max_length",
                  "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  metric: l\n",
                  "experiment.yaml:4: searcher.max_length is required"},
        BadConfig{"max_trials missing for random",
                  "name: x\nentrypoint: ./run\nsearcher:\n  name: random\n  metric: l\n  max_length: "
                  "{batches: 1}\n",
                  "experiment.yaml:4: searcher.max_trials is required"},
        BadConfig{"max_trials not positive", kHead + "  max_trials: ten\n",
                  "experiment.yaml:8: searcher.max_trials must be a positive integer, got \"ten\""},
        BadConfig{"zero slots", kHead + "resources:\n  slots_per_trial: 0\n",
                  "experiment.yaml:9: resources.slots_per_trial must be a positive integer, got 0"},
        BadConfig{
            "zero grid count",
            kHead +
                "hyperparameters:\n  lr:\n    type: double\n    minval: 0.1\n    maxval: 1\n    count: 0\n",
            "experiment.yaml:13: hyperparameters.lr.count must be a positive integer, got 0"},
        BadConfig{"minval above maxval",
                  kHead + "hyperparameters:\n  lr:\n    type: double\n    minval: 2\n    maxval: 1\n",
                  "experiment.yaml:12: hyperparameters.lr.maxval must be at least minval (2), got 1"},
        BadConfig{"float bounds of an int",
                  kHead + "hyperparameters:\n  n: {type: int, minval: 1.5, maxval: 3}\n",
                  "experiment.yaml:9: hyperparameters.n.minval must be an integer, got 1.5"},
        BadConfig{"empty categorical",
                  kHead + "hyperparameters:\n  opt:\n    type: categorical\n    vals: []\n",
                  "experiment.yaml:11: hyperparameters.opt.vals must not be empty"},
        BadConfig{"unknown hyperparameter type", kHead + "hyperparameters:\n  lr:\n    type: uniform\n",
                  "experiment.yaml:10: hyperparameters.lr.type must be one of const, int, double, log, "
                  "categorical, "
                  "got \"uniform\""},
        BadConfig{"bad searcher name", "name: x\nentrypoint: ./run\nsearcher:\n  name: bayes\n",
                  "experiment.yaml:4: searcher.name must be one of single, grid, random, adaptive_asha, got "
                  "\"bayes\""},
        BadConfig{"bad mode", kHead + "  mode: wild\n",
                  "experiment.yaml:8: searcher.mode must be one of aggressive, standard, conservative, got "
                  "\"wild\""},
        BadConfig{"divisor not above 1", kHead + "  divisor: 1\n",
                  "experiment.yaml:8: searcher.divisor must be greater than 1, got 1"},
        BadConfig{"priority out of range", kHead + "resources:\n  priority: 100\n",
                  "experiment.yaml:9: resources.priority must be an integer from 1 to 99, got 100"},
        BadConfig{"relative checkpoint path", kHead + "checkpoint_storage:\n  host_path: ckpt\n",
                  "experiment.yaml:9: checkpoint_storage.host_path must be an absolute path, got \"ckpt\""},
        BadConfig{"bad environment item", kHead + "environment:\n  variables:\n    - NOVALUE\n",
                  "experiment.yaml:10: environment.variables[0] must read NAME=VALUE, got \"NOVALUE\""},
        BadConfig{"map where a list belongs", kHead + "labels: {a: b}\n",
                  "experiment.yaml:8: labels must be a list of strings, got a map"},
        BadConfig{"list where a string belongs", "name: [a, b]\n",
                  "experiment.yaml:1: name must be a string, got a list"},
        BadConfig{"bool where a number belongs", kHead + "resources:\n  weight: true\n",
                  "experiment.yaml:9: resources.weight must be a number, got true"},
        BadConfig{"string where a bool belongs", kHead + "  smaller_is_better: maybe\n",
                  "experiment.yaml:8: searcher.smaller_is_better must be true or false, got \"maybe\""},
        BadConfig{"not a map", "- a\n- b\n",
                  "experiment.yaml:1: the config must be a map of keys, got a list"},
        BadConfig{"empty document", "", "experiment.yaml:1: the config must be a map of keys, got nothing"},
        BadConfig{"searcher not a map", "name: x\nentrypoint: ./run\nsearcher: single\n",
                  "experiment.yaml:3: searcher must be a map, got \"single\""}),
    [](const ::testing::TestParamInfo<BadConfig>& info) { return "case" + std::to_string(info.index); });

TEST(ExperimentConfigTest, BadYamlNamesTheLine) {
  auto c = ParseExperimentConfig(kHead + "labels: [a, b\nmax_restarts: 1\n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_EQ(c.status().message().rfind("experiment.yaml:", 0), 0u) << c.status().message();
  EXPECT_NE(c.status().message().find("invalid YAML"), std::string::npos) << c.status().message();
}

TEST(ExperimentConfigTest, FileNameIsUsedInErrors) {
  auto c = ParseExperimentConfig("name: 1\nentrypoint: [x]\n", "my.yaml");
  EXPECT_EQ(c.status().message(), "my.yaml:2: entrypoint must be a string, got a list");
}

TEST(ExperimentConfigTest, DefaultHparams) {
  auto c = ParseExperimentConfig(kFull);
  ASSERT_TRUE(c.ok());
  auto h = DefaultHparams(c->hyperparameters);
  EXPECT_EQ(h["learning_rate"], 0.01);
  EXPECT_EQ(h["layers"], nlohmann::json({64, 64}));
  EXPECT_EQ(h["width"], 72);  // floor((16 + 129) / 2)
  EXPECT_DOUBLE_EQ(h["dropout"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(h["weight_decay"].get<double>(), 1e-4);  // 10^((-6 + -2) / 2)
  EXPECT_EQ(h["optimizer"], "sgd");
  EXPECT_EQ(h["model"]["depth"], 5);
  EXPECT_EQ(h["model"]["activation"], "relu");
}

}  // namespace
}  // namespace ring
