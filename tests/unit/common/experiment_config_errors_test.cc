// Malformed experiment configs: each must be refused with kInvalidConfig and
// the exact message, "experiment.yaml:<line>: <dotted.path> <what>, got <value>",
// so both the key path and the line are pinned.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "common/experiment_config.h"

namespace ring {
namespace {

// The head of a valid config; most cases append lines after it (line 8 on).
const std::string kHead =
    "name: x\n"            // 1
    "entrypoint: ./run\n"  // 2
    "searcher:\n"          // 3
    "  name: single\n"     // 4
    "  metric: loss\n"     // 5
    "  max_length:\n"      // 6
    "    batches: 10\n";   // 7

// A searcher block that ends on line 5, for cases about its keys.
std::string Searcher(const std::string& lines) {
  return "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  metric: loss\n" + lines;
}

struct BadConfig {
  const char* what;
  std::string yaml;
  std::string message;
};

void PrintTo(const BadConfig& c, std::ostream* os) {
  *os << c.what;
}

// "unclosed bracket at the end" -> "unclosed_bracket_at_the_end".
std::string CaseName(const ::testing::TestParamInfo<BadConfig>& info) {
  std::string name;
  for (const char* p = info.param.what; *p; ++p)
    name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return name;
}

class MalformedConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(MalformedConfigTest, ErrorNamesPathAndLine) {
  const auto& p = GetParam();
  auto c = ParseExperimentConfig(p.yaml);
  ASSERT_FALSE(c.ok()) << p.what;
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_EQ(c.status().message(), p.message) << p.what;
}

const BadConfig kWrongTypes[] = {
    {"string for an int", kHead + "max_restarts: ten\n",
     "experiment.yaml:8: max_restarts must be an integer >= 0, got \"ten\""},
    {"bool for an int", kHead + "max_restarts: true\n",
     "experiment.yaml:8: max_restarts must be an integer >= 0, got true"},
    {"float for an int", kHead + "  max_trials: 1.5\n",
     "experiment.yaml:8: searcher.max_trials must be a positive integer, got 1.5"},
    {"int past int64", kHead + "max_restarts: 99999999999999999999999\n",
     "experiment.yaml:8: max_restarts must be an integer >= 0, got 99999999999999999999999"},
    {"bool for a number", kHead + "resources:\n  weight: true\n",
     "experiment.yaml:9: resources.weight must be a number, got true"},
    {"not-a-number for a number", kHead + "resources:\n  weight: .nan\n",
     "experiment.yaml:9: resources.weight must be a number, got .nan"},
    {"string for a number", kHead + "  divisor: abc\n",
     "experiment.yaml:8: searcher.divisor must be a number, got \"abc\""},
    {"map for a list", kHead + "labels: {a: b}\n",
     "experiment.yaml:8: labels must be a list of strings, got a map"},
    {"list for a string", kHead + "description: [a, b]\n",
     "experiment.yaml:8: description must be a string, got a list"},
    {"list inside a list of strings", kHead + "labels: [a, [b]]\n",
     "experiment.yaml:8: labels[1] must be a string, got a list"},
    {"map for a string", kHead + "description: {a: 1}\n",
     "experiment.yaml:8: description must be a string, got a map"},
    {"string for a bool", kHead + "  smaller_is_better: maybe\n",
     "experiment.yaml:8: searcher.smaller_is_better must be true or false, got \"maybe\""},
    {"string for a map", "name: x\nentrypoint: ./run\nsearcher: single\n",
     "experiment.yaml:3: searcher must be a map, got \"single\""},
    {"word for max_length", Searcher("  max_length: long\n"),
     "experiment.yaml:6: searcher.max_length must be an integer or a map like {batches: N}, got \"long\""},
    {"list for a period", kHead + "min_validation_period: [5]\n",
     "experiment.yaml:8: min_validation_period must be an integer or a map like {batches: N}, got a list"},
    {"not a map at the top", "- a\n- b\n", "experiment.yaml:1: the config must be a map of keys, got a list"},
    {"a scalar at the top", "just a string\n",
     "experiment.yaml:1: the config must be a map of keys, got \"just a string\""},
    {"empty document", "", "experiment.yaml:1: the config must be a map of keys, got nothing"},
    {"only a comment", "# nothing here\n",
     "experiment.yaml:1: the config must be a map of keys, got nothing"},
    {"key that is a list", kHead + "? [a]\n: b\n",
     "experiment.yaml:8: keys of the config must be strings, got a list"},
};
INSTANTIATE_TEST_SUITE_P(WrongTypes, MalformedConfigTest, ::testing::ValuesIn(kWrongTypes), CaseName);

const BadConfig kUnknownKeys[] = {
    {"top level typo", kHead + "serhcer: {}\n",
     "experiment.yaml:8: unknown key \"serhcer\" (did you mean \"searcher\"?)"},
    {"top level, nothing close", kHead + "gpus: 2\n", "experiment.yaml:8: unknown key \"gpus\""},
    {"searcher typo", kHead + "  max_lenght: 5\n",
     "experiment.yaml:8: unknown key \"searcher.max_lenght\" (did you mean \"max_length\"?)"},
    {"max_length in days", Searcher("  max_length: {days: 3}\n"),
     "experiment.yaml:6: unknown key \"searcher.max_length.days\" (a length is one of batches, records, "
     "epochs)"},
    {"resources typo", kHead + "resources:\n  slot_per_trial: 2\n",
     "experiment.yaml:9: unknown key \"resources.slot_per_trial\" (did you mean \"slots_per_trial\"?)"},
    {"checkpoint_storage typo", kHead + "checkpoint_storage:\n  host_path: /c\n  save_trial_lates: 1\n",
     "experiment.yaml:10: unknown key \"checkpoint_storage.save_trial_lates\" (did you mean "
     "\"save_trial_latest\"?)"},
    {"key of an int hyperparameter",
     kHead + "hyperparameters:\n  lr: {type: int, minval: 1, maxval: 2, step: 1}\n",
     "experiment.yaml:9: unknown key \"hyperparameters.lr.step\""},
    {"base of an int hyperparameter",
     kHead + "hyperparameters:\n  n:\n    type: int\n    minval: 1\n    maxval: 2\n    base: 2\n",
     "experiment.yaml:13: unknown key \"hyperparameters.n.base\""},
    {"key of a nested hyperparameter",
     kHead + "hyperparameters:\n  m:\n    n:\n      lr: {type: double, minval: 1, maxval: 2, cuont: 3}\n",
     "experiment.yaml:11: unknown key \"hyperparameters.m.n.lr.cuont\" (did you mean \"count\"?)"},
    {"environment typo", kHead + "environment:\n  variable:\n    A: 1\n",
     "experiment.yaml:9: unknown key \"environment.variable\" (did you mean \"variables\"?)"},
};
INSTANTIATE_TEST_SUITE_P(UnknownKeys, MalformedConfigTest, ::testing::ValuesIn(kUnknownKeys), CaseName);

const BadConfig kMissingKeys[] = {
    {"entrypoint", "name: x\nsearcher: {name: single, metric: l, max_length: {batches: 1}}\n",
     "experiment.yaml:1: entrypoint is required"},
    {"searcher", "name: x\nentrypoint: ./run\n", "experiment.yaml:1: searcher is required"},
    {"searcher.name", "name: x\nentrypoint: ./run\nsearcher:\n  metric: l\n",
     "experiment.yaml:4: searcher.name is required"},
    {"searcher.metric", "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  max_length: {batches: 1}\n",
     "experiment.yaml:4: searcher.metric is required"},
    {"searcher.max_length of asha",
     "name: x\nentrypoint: ./run\nsearcher:\n  name: adaptive_asha\n  metric: l\n  max_trials: 2\n",
     "experiment.yaml:4: searcher.max_time and time_metric are required by adaptive_asha (or the older "
     "max_length)"},
    {"max_length.batches", Searcher("  max_length: {}\n"),
     "experiment.yaml:6: searcher.max_length must have exactly one of batches, records, epochs, got none"},
    {"max_trials for random",
     "name: x\nentrypoint: ./run\nsearcher:\n  name: random\n  metric: l\n  max_length: {batches: 1}\n",
     "experiment.yaml:4: searcher.max_trials is required"},
    {"max_trials for adaptive_asha",
     "name: x\nentrypoint: ./run\nsearcher:\n  name: adaptive_asha\n  metric: l\n  max_length: {batches: "
     "1}\n",
     "experiment.yaml:4: searcher.max_trials is required"},
    {"container_path of directory", kHead + "checkpoint_storage:\n  type: directory\n",
     "experiment.yaml:9: checkpoint_storage.container_path is required"},
    {"minval of a double", kHead + "hyperparameters:\n  lr:\n    type: double\n    maxval: 3\n",
     "experiment.yaml:10: hyperparameters.lr.minval is required"},
    // An empty value ("key:" and nothing) is reported on its key's line, not
    // on the next token's.
    {"empty entrypoint",
     "name: x\nentrypoint:\nsearcher: {name: single, metric: l, max_length: {batches: 1}}\n",
     "experiment.yaml:2: entrypoint is required"},
    {"empty metric before a blank line",
     "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  metric:\n\n  max_length: {batches: 1}\n",
     "experiment.yaml:5: searcher.metric is required"},
    {"empty value at the end", "name: x\nsearcher: {name: single, metric: l}\nentrypoint:\n",
     "experiment.yaml:3: entrypoint is required"},
    {"empty section", "name: x\nentrypoint: ./run\nsearcher:\nmax_restarts: 1\n",
     "experiment.yaml:3: searcher is required"},
};
INSTANTIATE_TEST_SUITE_P(MissingKeys, MalformedConfigTest, ::testing::ValuesIn(kMissingKeys), CaseName);

const BadConfig kBadValues[] = {
    {"negative max_restarts", kHead + "max_restarts: -1\n",
     "experiment.yaml:8: max_restarts must be an integer >= 0, got -1"},
    {"zero slots", kHead + "resources:\n  slots_per_trial: 0\n",
     "experiment.yaml:9: resources.slots_per_trial 0 (a trial that holds no slot) is a Determined feature "
     "Ringmaster does not support yet: give 1 or more"},
    {"negative slots", kHead + "resources:\n  slots_per_trial: -1\n",
     "experiment.yaml:9: resources.slots_per_trial must be a positive integer, got -1"},
    {"zero max_slots", kHead + "resources:\n  max_slots: 0\n",
     "experiment.yaml:9: resources.max_slots must be a positive integer, got 0"},
    {"zero max_length", Searcher("  max_length: {batches: 0}\n"),
     "experiment.yaml:6: searcher.max_length.batches must be a positive integer, got 0"},
    {"zero grid count",
     kHead + "hyperparameters:\n  lr:\n    type: double\n    minval: 0.1\n    maxval: 1\n    count: 0\n",
     "experiment.yaml:13: hyperparameters.lr.count must be a positive integer, got 0"},
    {"negative max_concurrent_trials", kHead + "  max_concurrent_trials: -1\n",
     "experiment.yaml:8: searcher.max_concurrent_trials must be an integer >= 0, got -1"},
    {"zero max_rungs", kHead + "  max_rungs: 0\n",
     "experiment.yaml:8: searcher.max_rungs must be a positive integer, got 0"},
    {"minval above maxval",
     kHead + "hyperparameters:\n  lr:\n    type: double\n    minval: 2\n    maxval: 1\n",
     "experiment.yaml:12: hyperparameters.lr.maxval must be at least minval (2), got 1"},
    {"float bounds of an int", kHead + "hyperparameters:\n  n: {type: int, minval: 1.5, maxval: 3}\n",
     "experiment.yaml:9: hyperparameters.n.minval must be an integer, got 1.5"},
    // Found by fuzz/fuzz_api: a key that is not UTF-8 made the master throw
    // when it wrote the trial's hyperparameters as JSON.
    {"not UTF-8", kHead + "hyperparameters:\n  lr: {type\xb7: double}\n",
     "experiment.yaml:9: the config is not UTF-8 text (save it as UTF-8)"},
    {"UTF-16 surrogate", kHead + "description: \xed\xa0\x80\n",
     "experiment.yaml:8: the config is not UTF-8 text (save it as UTF-8)"},
    // Found by fuzz/fuzz_config: the default value (the midpoint) of these
    // overflowed int64_t.
    {"int bounds past 2^53",
     kHead + "hyperparameters:\n  n: {type: int, minval: 9223372036854775807, maxval: 9223372036854775807}\n",
     "experiment.yaml:9: hyperparameters.n.minval must be an integer from -2^53 to 2^53, got "
     "9223372036854775807"},
    {"int bounds below -2^53",
     kHead + "hyperparameters:\n  n: {type: int, minval: 0, maxval: 0}\n"
             "  m: {type: int, minval: -9007199254740993, maxval: 0}\n",
     "experiment.yaml:10: hyperparameters.m.minval must be an integer from -2^53 to 2^53, got "
     "-9007199254740993"},
    {"log base 1",
     kHead + "hyperparameters:\n  lr:\n    type: log\n    minval: -5\n    maxval: -1\n    base: 1\n",
     "experiment.yaml:13: hyperparameters.lr.base must be positive and not 1, got 1"},
    {"empty categorical", kHead + "hyperparameters:\n  opt:\n    type: categorical\n    vals: []\n",
     "experiment.yaml:11: hyperparameters.opt.vals must not be empty"},
    {"categorical vals not a list",
     kHead + "hyperparameters:\n  opt:\n    type: categorical\n    vals: sgd\n",
     "experiment.yaml:11: hyperparameters.opt.vals must be a list, got \"sgd\""},
    {"unknown hyperparameter type", kHead + "hyperparameters:\n  lr:\n    type: uniform\n",
     "experiment.yaml:10: hyperparameters.lr.type must be one of const, int, double, log, categorical, "
     "got \"uniform\""},
    {"bad searcher name", "name: x\nentrypoint: ./run\nsearcher:\n  name: bayes\n",
     "experiment.yaml:4: searcher.name must be one of single, grid, random, adaptive_asha, got \"bayes\""},
    {"bad mode", kHead + "  mode: wild\n",
     "experiment.yaml:8: searcher.mode must be one of aggressive, standard, conservative, got \"wild\""},
    {"divisor of 1", kHead + "  divisor: 1\n",
     "experiment.yaml:8: searcher.divisor must be greater than 1, got 1"},
    {"divisor below 1", kHead + "  divisor: 0.5\n",
     "experiment.yaml:8: searcher.divisor must be greater than 1, got 0.5"},
    {"priority 100", kHead + "resources:\n  priority: 100\n",
     "experiment.yaml:9: resources.priority must be an integer from 1 to 99, got 100"},
    {"priority 0", kHead + "resources:\n  priority: 0\n",
     "experiment.yaml:9: resources.priority must be an integer from 1 to 99, got 0"},
    {"negative weight", kHead + "resources:\n  weight: -1\n",
     "experiment.yaml:9: resources.weight must be positive, got -1"},
    {"relative checkpoint path", kHead + "checkpoint_storage:\n  host_path: ckpt\n",
     "experiment.yaml:9: checkpoint_storage.host_path must be an absolute path, got \"ckpt\""},
    {"host_path with ..", kHead + "checkpoint_storage:\n  host_path: /c/../etc\n",
     "experiment.yaml:9: checkpoint_storage.host_path must not contain \"..\", got \"/c/../etc\""},
    {"storage_path with ..", kHead + "checkpoint_storage:\n  host_path: /c\n  storage_path: a/../../x\n",
     "experiment.yaml:10: checkpoint_storage.storage_path must not contain \"..\", got \"a/../../x\""},
    {"absolute storage_path", kHead + "checkpoint_storage:\n  host_path: /c\n  storage_path: /etc\n",
     "experiment.yaml:10: checkpoint_storage.storage_path must be a relative path below host_path, got "
     "\"/etc\""},
    {"checkpoint storage type", kHead + "checkpoint_storage:\n  type: s3\n  host_path: /c\n",
     "experiment.yaml:9: checkpoint_storage.type s3 is a Determined storage Ringmaster does not support yet: "
     "use shared_fs (a folder every agent mounts), or leave checkpoint_storage out for the master's default"},
    {"environment item without =", kHead + "environment:\n  variables:\n    - NOVALUE\n",
     "experiment.yaml:10: environment.variables[0] must read NAME=VALUE, got \"NOVALUE\""},
    {"environment item without a name", kHead + "environment:\n  variables:\n    - A=1\n    - =1\n",
     "experiment.yaml:11: environment.variables[1] must read NAME=VALUE, got \"=1\""},
    {"environment item that is a list", kHead + "environment:\n  variables:\n    - A=1\n    - [x]\n",
     "experiment.yaml:11: environment.variables[1] must be a string, got a list"},
    {"environment value that is a list", kHead + "environment:\n  variables:\n    A: [1]\n",
     "experiment.yaml:10: environment.variables.A must be a string, got a list"},
    {"environment variables as a string", kHead + "environment:\n  variables: x\n",
     "experiment.yaml:9: environment.variables must be a map of NAME: value or a list of \"NAME=VALUE\", "
     "got \"x\""},
    {"zero preemption_timeout", kHead + "preemption_timeout: 0\n",
     "experiment.yaml:8: preemption_timeout must be a positive number of seconds, got 0"},
    {"log_retention_days below -1", kHead + "log_retention_days: -2\n",
     "experiment.yaml:8: log_retention_days must be a number of days >= 0, or -1 to keep logs, got -2"},
    {"negative seed", kHead + "reproducibility:\n  experiment_seed: -1\n",
     "experiment.yaml:9: reproducibility.experiment_seed must be an integer >= 0, got -1"},
    {"empty name", "name: ''\nentrypoint: x\n",
     "experiment.yaml:1: name must not be empty\nexperiment.yaml:1: searcher is required"},
    {"empty label", kHead + "labels: [a, '']\n", "experiment.yaml:8: labels[1] must not be empty"},
};
INSTANTIATE_TEST_SUITE_P(BadValues, MalformedConfigTest, ::testing::ValuesIn(kBadValues), CaseName);

// The grid searcher needs `count` on int, double and log hyperparameters; the
// error is on the line of the hyperparameter that lacks it.
const std::string kGridHead =
    "name: x\n"                                  // 1
    "entrypoint: ./run\n"                        // 2
    "searcher:\n"                                // 3
    "  name: grid\n"                             // 4
    "  metric: loss\n"                           // 5
    "  max_length:\n"                            // 6
    "    batches: 10\n"                          // 7
    "hyperparameters:\n"                         // 8
    "  a: 1\n"                                   // 9
    "  b: {type: categorical, vals: [1, 2]}\n";  // 10

const BadConfig kGridCounts[] = {
    {"grid double without count", kGridHead + "  lr:\n    type: double\n    minval: 0.1\n    maxval: 1\n",
     "experiment.yaml:12: hyperparameters.lr.count is required by the grid searcher"},
    {"grid int without count", kGridHead + "  n: {type: int, minval: 1, maxval: 3}\n",
     "experiment.yaml:11: hyperparameters.n.count is required by the grid searcher"},
    {"grid log without count",
     kGridHead + "  c: {type: log, minval: -3, maxval: -1, count: 3}\n"
                 "  d: {type: log, minval: -3, maxval: -1}\n",
     "experiment.yaml:12: hyperparameters.d.count is required by the grid searcher"},
    {"grid nested without count",
     kGridHead + "  opt:\n    name: sgd\n    lr: {type: double, minval: 0, maxval: 1}\n",
     "experiment.yaml:13: hyperparameters.opt.lr.count is required by the grid searcher"},
    {"grid hyperparameters before the searcher",
     "name: x\nentrypoint: ./run\nhyperparameters:\n  lr: {type: double, minval: 0, maxval: 1}\n"
     "searcher: {name: grid, metric: loss, max_length: {batches: 1}}\n",
     "experiment.yaml:4: hyperparameters.lr.count is required by the grid searcher"},
};
INSTANTIATE_TEST_SUITE_P(GridCounts, MalformedConfigTest, ::testing::ValuesIn(kGridCounts), CaseName);

TEST(ExperimentConfigErrorsTest, OnlyTheGridSearcherNeedsCounts) {
  const std::string space = "hyperparameters:\n  lr: {type: double, minval: 0, maxval: 1}\n";
  for (const char* name : {"single", "random", "adaptive_asha"}) {
    auto c = ParseExperimentConfig("name: x\nentrypoint: ./run\nsearcher: {name: " + std::string(name) +
                                   ", metric: loss, max_trials: 2, max_length: {batches: 1}}\n" + space);
    EXPECT_TRUE(c.ok()) << name << ": " << c.status().message();
  }
  auto grid = ParseExperimentConfig(kGridHead + "  lr: {type: double, minval: 0, maxval: 1, count: 4}\n");
  ASSERT_TRUE(grid.ok()) << grid.status().message();
  EXPECT_EQ(grid->hyperparameters.at("lr").count, 4);
}

const BadConfig kBadYaml[] = {
    {"unclosed bracket, noticed on the next line", kHead + "labels: [a, b\nmax_restarts: 1\n",
     "experiment.yaml:9: invalid YAML: end of sequence flow not found"},
    {"unclosed bracket at the end", kHead + "hyperparameters: {a: [1, 2\n",
     "experiment.yaml:8: invalid YAML: end of sequence flow not found"},
    {"unclosed brace at the end without a newline", kHead + "data: {a: 1",
     "experiment.yaml:8: invalid YAML: end of map flow not found"},
    {"tab indentation", "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n\tmetric: l\n",
     "experiment.yaml:5: invalid YAML: illegal tab when looking for indentation"},
    {"bad indentation", "name: x\n  entrypoint: y\n", "experiment.yaml:2: invalid YAML: illegal map value"},
};
INSTANTIATE_TEST_SUITE_P(BadYaml, MalformedConfigTest, ::testing::ValuesIn(kBadYaml), CaseName);

const BadConfig kHostile[] = {
    {"duplicate searcher key", kHead + "  name: grid\n",
     "experiment.yaml:8: duplicate key \"searcher.name\""},
    {"duplicate hyperparameter", kHead + "hyperparameters:\n  lr: 1\n  lr: 2\n",
     "experiment.yaml:10: duplicate key \"hyperparameters.lr\""},
    {"infinite bound", kHead + "hyperparameters:\n  lr: {type: double, minval: 0, maxval: .inf}\n",
     "experiment.yaml:9: hyperparameters.lr.maxval must be a number, got .inf"},
};
INSTANTIATE_TEST_SUITE_P(Hostile, MalformedConfigTest, ::testing::ValuesIn(kHostile), CaseName);

std::string Nested(int levels) {
  return kHead + "data: {a: " + std::string(levels, '[') + "1" + std::string(levels, ']') + "}\n";
}

TEST(ExperimentConfigErrorsTest, DeepNestingIsRefusedNotACrash) {
  auto c = ParseExperimentConfig(Nested(70));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_EQ(c.status().message().rfind("experiment.yaml:8: data.a[0][0]", 0), 0u) << c.status().message();
  EXPECT_NE(c.status().message().find("is nested too deeply (over 64 levels)"), std::string::npos);
  auto deeper = ParseExperimentConfig(Nested(5000));  // refused by the YAML reader itself
  ASSERT_FALSE(deeper.ok());
  EXPECT_EQ(deeper.status().message(), "experiment.yaml:8: invalid YAML: nested too deeply");
  EXPECT_TRUE(ParseExperimentConfig(Nested(20)).ok());
}

TEST(ExperimentConfigErrorsTest, AliasBombIsRefused) {
  std::string yaml = kHead + "data:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 6; ++i) {  // 10^7 values once expanded
    const std::string prev = "*a" + std::to_string(i - 1);
    yaml += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int j = 1; j < 10; ++j) yaml += ", " + prev;
    yaml += "]\n";
  }
  auto c = ParseExperimentConfig(yaml);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_EQ(c.status().message().rfind("experiment.yaml:", 0), 0u) << c.status().message();
  EXPECT_NE(c.status().message().find("makes the config hold over 100000 keys and values"), std::string::npos)
      << c.status().message();
}

// Whatever yaml-cpp's wording, a syntax error keeps the prefix and the line.
TEST(ExperimentConfigErrorsTest, BadYamlKeepsPrefixAndLine) {
  auto c = ParseExperimentConfig(kHead + "labels: [a, b\n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_EQ(c.status().message().rfind("experiment.yaml:8: invalid YAML: ", 0), 0u) << c.status().message();
}

}  // namespace
}  // namespace ring
