// The experiment config parser on valid input: every key of the contract
// lands in the expected field, defaults fill what is left out, and
// DefaultHparams picks the documented value of every hyperparameter type.
// Malformed configs are in experiment_config_errors_test.cc.
#include "common/experiment_config.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ring {
namespace {

using Type = Hyperparameter::Type;
using nlohmann::json;

const char* kFull = R"(name: mnist
description: a full config
labels: [vision, baseline]
entrypoint: python3 train.py --epochs 2
hyperparameters:
  learning_rate: 0.01
  layers: [64, 64]
  flag: true
  batch_size: {type: const, val: 32}
  schedule: {type: const, val: {warmup: 5, decay: cosine}}
  width: {type: int, minval: 16, maxval: 129, count: 4}
  shift: {type: int, minval: -3, maxval: 0}
  dropout: {type: double, minval: 0.0, maxval: 0.5, count: 2}
  weight_decay: {type: log, base: 2, minval: -10, maxval: -2, count: 3}
  momentum: {type: log, minval: -4, maxval: -2}
  optimizer: {type: categorical, vals: [sgd, 3, 0.5, false, [1, 2]]}
  model:
    depth: {type: int, minval: 2, maxval: 8}
    activation: relu
    head:
      units: {type: categorical, vals: [10, 20]}
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
  save_experiment_best: 3
  save_trial_best: 2
  save_trial_latest: 4
reproducibility:
  experiment_seed: 42
environment:
  variables:
    OMP_NUM_THREADS: 1
    DATA: /data
    EMPTY: ""
data:
  url: file:///data/mnist
  shards: 4
  splits: [train, test]
preemption_timeout: 120
)";

TEST(ExperimentConfigTest, FullConfigParsesEveryKey) {
  auto c = ParseExperimentConfig(kFull);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name, "mnist");
  EXPECT_EQ(c->description, "a full config");
  EXPECT_EQ(c->labels, (std::vector<std::string>{"vision", "baseline"}));
  EXPECT_EQ(c->entrypoint, "python3 train.py --epochs 2");

  const auto& s = c->searcher;
  EXPECT_EQ(s.name, "adaptive_asha");
  EXPECT_EQ(s.metric, "accuracy");
  EXPECT_FALSE(s.smaller_is_better);
  EXPECT_EQ(s.max_trials, 16);
  EXPECT_EQ(s.max_length_batches, 1000);
  EXPECT_EQ(s.max_concurrent_trials, 4);
  EXPECT_EQ(s.mode, "aggressive");
  EXPECT_EQ(s.divisor, 3);
  EXPECT_EQ(s.max_rungs, 4);

  const auto& r = c->resources;
  EXPECT_EQ(r.slots_per_trial, 2);
  EXPECT_EQ(r.resource_pool, "gpus");
  EXPECT_EQ(r.priority, 10);
  EXPECT_EQ(r.weight, 2.5);
  EXPECT_EQ(r.max_slots, 8);

  EXPECT_EQ(c->max_restarts, 2);
  EXPECT_EQ(c->min_validation_period_batches, 100);
  EXPECT_EQ(c->min_checkpoint_period_batches, 200);
  ASSERT_TRUE(c->checkpoint_storage.has_value());
  const auto& cs = *c->checkpoint_storage;
  EXPECT_EQ(cs.type, "shared_fs");
  EXPECT_EQ(cs.host_path, "/mnt/ckpt");
  EXPECT_EQ(cs.storage_path, "team-a");
  EXPECT_EQ(cs.save_experiment_best, 3);
  EXPECT_EQ(cs.save_trial_best, 2);
  EXPECT_EQ(cs.save_trial_latest, 4);
  EXPECT_EQ(c->experiment_seed, 42);
  EXPECT_EQ(c->environment.variables,
            (std::map<std::string, std::string>{{"OMP_NUM_THREADS", "1"}, {"DATA", "/data"}, {"EMPTY", ""}}));
  EXPECT_EQ(c->data,
            json::parse(R"({"url": "file:///data/mnist", "shards": 4, "splits": ["train", "test"]})"));
  EXPECT_EQ(c->preemption_timeout_s, 120);
}

TEST(ExperimentConfigTest, FullConfigParsesEveryHyperparameterType) {
  auto c = ParseExperimentConfig(kFull);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const auto& hp = c->hyperparameters;
  EXPECT_EQ(hp.size(), 12u);

  // Shorthand constants: a scalar, a list or a bool in place of a map.
  EXPECT_EQ(hp.at("learning_rate").type, Type::kConst);
  EXPECT_EQ(hp.at("learning_rate").value, 0.01);
  EXPECT_EQ(hp.at("layers").type, Type::kConst);
  EXPECT_EQ(hp.at("layers").value, json({64, 64}));
  EXPECT_EQ(hp.at("flag").value, true);
  EXPECT_EQ(hp.at("batch_size").type, Type::kConst);
  EXPECT_EQ(hp.at("batch_size").value, 32);
  EXPECT_TRUE(hp.at("batch_size").value.is_number_integer());
  EXPECT_EQ(hp.at("schedule").value, json::parse(R"({"warmup": 5, "decay": "cosine"})"));

  const auto& width = hp.at("width");
  EXPECT_EQ(width.type, Type::kInt);
  EXPECT_EQ(width.minval, 16);
  EXPECT_EQ(width.maxval, 129);
  EXPECT_EQ(width.count, 4);
  EXPECT_EQ(hp.at("shift").minval, -3);
  EXPECT_FALSE(hp.at("shift").count.has_value());

  const auto& dropout = hp.at("dropout");
  EXPECT_EQ(dropout.type, Type::kDouble);
  EXPECT_EQ(dropout.minval, 0.0);
  EXPECT_EQ(dropout.maxval, 0.5);
  EXPECT_EQ(dropout.count, 2);

  const auto& wd = hp.at("weight_decay");
  EXPECT_EQ(wd.type, Type::kLog);
  EXPECT_EQ(wd.base, 2);
  EXPECT_EQ(wd.minval, -10);
  EXPECT_EQ(wd.maxval, -2);
  EXPECT_EQ(wd.count, 3);
  EXPECT_EQ(hp.at("momentum").base, 10);  // the default base

  const auto& opt = hp.at("optimizer");
  EXPECT_EQ(opt.type, Type::kCategorical);
  EXPECT_EQ(opt.vals, (std::vector<json>{"sgd", 3, 0.5, false, json({1, 2})}));

  const auto& model = hp.at("model");
  EXPECT_EQ(model.type, Type::kNested);
  ASSERT_EQ(model.nested.size(), 3u);
  EXPECT_EQ(model.nested.at("depth").type, Type::kInt);
  EXPECT_EQ(model.nested.at("depth").maxval, 8);
  EXPECT_EQ(model.nested.at("activation").value, "relu");
  const auto& head = model.nested.at("head");
  EXPECT_EQ(head.type, Type::kNested);
  EXPECT_EQ(head.nested.at("units").vals, (std::vector<json>{10, 20}));
}

TEST(ExperimentConfigTest, DefaultsOfAMinimalConfig) {
  auto c = ParseExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  metric: loss\n  max_length: {batches: 10}\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->description, "");
  EXPECT_TRUE(c->labels.empty());
  EXPECT_EQ(c->searcher.max_trials, 1);
  EXPECT_TRUE(c->searcher.smaller_is_better);
  EXPECT_EQ(c->searcher.max_concurrent_trials, 16);  // Determined's default
  EXPECT_EQ(c->searcher.mode, "standard");
  EXPECT_EQ(c->searcher.divisor, 4);
  EXPECT_EQ(c->searcher.max_rungs, 5);
  EXPECT_EQ(c->resources.slots_per_trial, 1);
  EXPECT_EQ(c->resources.resource_pool, "default");
  EXPECT_EQ(c->resources.priority, 42);
  EXPECT_EQ(c->resources.weight, 1);
  EXPECT_FALSE(c->resources.max_slots.has_value());
  EXPECT_EQ(c->max_restarts, 5);
  EXPECT_EQ(c->min_validation_period_batches, 0);
  EXPECT_EQ(c->min_checkpoint_period_batches, 0);
  EXPECT_FALSE(c->checkpoint_storage.has_value());
  EXPECT_FALSE(c->experiment_seed.has_value());
  EXPECT_TRUE(c->environment.variables.empty());
  EXPECT_EQ(c->data, json::object());
  EXPECT_EQ(c->preemption_timeout_s, 3600);
  EXPECT_TRUE(c->hyperparameters.empty());
}

TEST(ExperimentConfigTest, CheckpointStorageDefaults) {
  auto c = ParseExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher: {name: single, metric: l, max_length: {batches: 1}}\n"
      "checkpoint_storage:\n  host_path: /shared\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->checkpoint_storage.has_value());
  EXPECT_EQ(c->checkpoint_storage->type, "shared_fs");
  EXPECT_EQ(c->checkpoint_storage->storage_path, "");
  EXPECT_EQ(c->checkpoint_storage->save_experiment_best, 0);
  EXPECT_EQ(c->checkpoint_storage->save_trial_best, 1);
  EXPECT_EQ(c->checkpoint_storage->save_trial_latest, 1);
}

TEST(ExperimentConfigTest, EnvironmentVariablesAsAList) {
  auto c = ParseExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher: {name: single, metric: l, max_length: {batches: 1}}\n"
      "environment:\n  variables:\n    - A=1\n    - B=x=y\n    - EMPTY=\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->environment.variables,
            (std::map<std::string, std::string>{{"A", "1"}, {"B", "x=y"}, {"EMPTY", ""}}));
}

TEST(ExperimentConfigTest, GridAndRandomSearchers) {
  auto grid = ParseExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher: {name: grid, metric: l, max_length: {batches: 7}}\n");
  ASSERT_TRUE(grid.ok()) << grid.status().message();
  EXPECT_EQ(grid->searcher.name, "grid");
  EXPECT_EQ(grid->searcher.max_length_batches, 7);
  auto random = ParseExperimentConfig(
      "name: x\nentrypoint: ./run\n"
      "searcher: {name: random, metric: l, max_trials: 9, max_length: {batches: 7}}\n");
  ASSERT_TRUE(random.ok()) << random.status().message();
  EXPECT_EQ(random->searcher.max_trials, 9);
}

// The master checks a warm start's source at submit and names its line.
TEST(ExperimentConfigTest, WarmStartSourceKeepsItsLine) {
  auto by_trial = ParseExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  metric: l\n  source_trial_id: 7\n");
  ASSERT_TRUE(by_trial.ok()) << by_trial.status().message();
  EXPECT_EQ(by_trial->searcher.source_trial_id.value_or(0), 7);
  EXPECT_EQ(by_trial->searcher.source_line, 6);
  auto by_uuid = ParseExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  source_checkpoint_uuid: abc\n  metric: l\n");
  ASSERT_TRUE(by_uuid.ok()) << by_uuid.status().message();
  EXPECT_EQ(by_uuid->searcher.source_checkpoint_uuid, "abc");
  EXPECT_EQ(by_uuid->searcher.source_line, 5);
  auto none = ParseExperimentConfig("name: x\nentrypoint: ./run\nsearcher: {name: single, metric: l}\n");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->searcher.source_line, 0);
}

TEST(ExperimentConfigTest, FileNameIsUsedInErrors) {
  auto c = ParseExperimentConfig("name: 1\nentrypoint: {x: 1}\n", "my.yaml");
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_EQ(c.status().message(),
            "my.yaml:1: searcher is required\nmy.yaml:2: entrypoint must be a string, got a map");
}

TEST(ExperimentConfigTest, DefaultHparams) {
  auto c = ParseExperimentConfig(kFull);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const json h = DefaultHparams(c->hyperparameters);
  EXPECT_EQ(h["learning_rate"], 0.01);
  EXPECT_EQ(h["layers"], json({64, 64}));
  EXPECT_EQ(h["flag"], true);
  EXPECT_EQ(h["batch_size"], 32);
  EXPECT_EQ(h["schedule"], json::parse(R"({"warmup": 5, "decay": "cosine"})"));
  EXPECT_EQ(h["width"], 72);  // floor((16 + 129) / 2)
  EXPECT_TRUE(h["width"].is_number_integer());
  EXPECT_EQ(h["shift"], -2);  // floor(-1.5), not truncation towards zero
  EXPECT_DOUBLE_EQ(h["dropout"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(h["weight_decay"].get<double>(), std::pow(2.0, -6));  // 2^((-10 + -2) / 2)
  EXPECT_DOUBLE_EQ(h["momentum"].get<double>(), 1e-3);                   // 10^((-4 + -2) / 2)
  EXPECT_EQ(h["optimizer"], "sgd");
  EXPECT_EQ(h["model"], json::parse(R"({"depth": 5, "activation": "relu", "head": {"units": 10}})"));
  EXPECT_EQ(h.size(), c->hyperparameters.size());
}

TEST(ExperimentConfigTest, DefaultHparamsOfAnEmptySpaceIsAnEmptyObject) {
  EXPECT_EQ(DefaultHparams({}), json::object());
}

}  // namespace
}  // namespace ring
