// Continuing a trial as a new experiment: the parent's config, the trial's
// values as constants, its seed, and a `single` searcher that warm-starts
// from the trial and trains to the new length in the parent's units. Each
// result must parse as a valid config.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include "common/config_continue.h"
#include "common/experiment_config.h"

namespace ring {
namespace {

const ContinueSource kSource{4, 17,
                             R"({"lr": 0.0125, "layers": [64, 32], "opt": {"name": "adam", "beta": 0.9},
                                        "dropout": null, "width": 3})",
                             99};

TEST(ConfigContinue, ASearchBecomesOneTrialWithTheTrialsValuesSeedAndSource) {
  const std::string parent = R"(name: sweep
entrypoint: python3 train.py
labels: [mnist]
hyperparameters:
  lr: {type: log, base: 10, minval: -4, maxval: -1}
  layers: {type: categorical, vals: [[64, 32], [128]]}
  opt:
    name: {type: categorical, vals: [adam, sgd]}
    beta: {type: double, minval: 0.8, maxval: 0.99}
  dropout: null
  width: {type: int, minval: 1, maxval: 8}
searcher:
  name: adaptive_asha
  metric: accuracy
  smaller_is_better: false
  max_trials: 16
  max_length: {epochs: 3}
records_per_epoch: 640
reproducibility: {experiment_seed: 5}
)";
  auto text = ContinueConfig(parent, kSource, 12);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto config = ParseExperimentConfig(*text);
  ASSERT_TRUE(config.ok()) << config.status().ToString() << "\n" << *text;
  EXPECT_EQ(config->name, "sweep");
  EXPECT_EQ(config->searcher.name, "single");
  EXPECT_EQ(config->searcher.metric, "accuracy");
  EXPECT_FALSE(config->searcher.smaller_is_better);
  ASSERT_TRUE(config->searcher.max_length.has_value());
  EXPECT_EQ(config->searcher.max_length->unit, Length::Unit::kEpochs);
  EXPECT_EQ(config->searcher.max_length->value, 12);
  EXPECT_EQ(config->searcher.source_trial_id, 17);
  EXPECT_EQ(config->experiment_seed, 99);
  EXPECT_EQ(config->description, "Continues trial 17 of experiment 4");
  EXPECT_EQ(config->labels, std::vector<std::string>{"mnist"});
  // The single searcher's one trial gets exactly the trial's values.
  const nlohmann::json values = DefaultHparams(config->hyperparameters);
  EXPECT_EQ(values, nlohmann::json::parse(kSource.hparams_json)) << values.dump();
}

TEST(ConfigContinue, ABareLengthStaysBareAndBatchesStayBatches) {
  auto bare = ContinueConfig("entrypoint: x\nsearcher: {name: single, metric: loss, max_length: 100}\n", kSource, 300);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(YAML::Load(*bare)["searcher"]["max_length"].as<int64_t>(), 300) << *bare;
  auto batches = ContinueConfig(
      "entrypoint: x\nsearcher: {name: random, max_trials: 4, metric: loss, max_length: {batches: 100}}\n", kSource, 250);
  ASSERT_TRUE(batches.ok());
  auto config = ParseExperimentConfig(*batches);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->searcher.max_length_batches, 250);
  EXPECT_EQ(config->searcher.max_trials, 1);
}

TEST(ConfigContinue, TheTrialDrivenContractKeepsItsTimeMetric) {
  auto timed = ContinueConfig(
      "entrypoint: x\nsearcher: {name: adaptive_asha, metric: loss, time_metric: epochs_done, max_time: 9, max_trials: 8}\n",
      kSource, 20);
  ASSERT_TRUE(timed.ok());
  auto config = ParseExperimentConfig(*timed);
  ASSERT_TRUE(config.ok()) << config.status().ToString() << "\n" << *timed;
  EXPECT_EQ(config->searcher.time_metric, "epochs_done");
  EXPECT_EQ(config->searcher.max_time, 20);
  EXPECT_FALSE(config->searcher.max_length.has_value());
  // No length at all: the trial decided; batches count the new one.
  auto open = ContinueConfig("entrypoint: x\nsearcher: {name: single, metric: loss}\n", kSource, 500);
  ASSERT_TRUE(open.ok());
  config = ParseExperimentConfig(*open);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->searcher.time_metric, "batches");
  EXPECT_EQ(config->searcher.max_time, 500);
}

TEST(ConfigContinue, RefusesWhatCannotBeContinued) {
  EXPECT_EQ(ContinueConfig("searcher: {name: single}\n", kSource, 0).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ContinueConfig("- a list\n", kSource, 10).status().code(), ErrorCode::kInvalidConfig);
  EXPECT_EQ(ContinueConfig("a: [unclosed\n", kSource, 10).status().code(), ErrorCode::kInvalidConfig);
}

}  // namespace
}  // namespace ring
