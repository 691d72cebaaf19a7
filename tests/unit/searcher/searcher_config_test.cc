// What Searcher::Create refuses (kInvalidConfig naming the field), the
// adaptive ASHA plan (rungs, brackets, splits, lengths), and progress.
#include <gtest/gtest.h>

#include "common/experiment_config.h"
#include "common/searcher/asha_plan.h"
#include "common/searcher/searcher.h"
#include "tests/unit/searcher/hyperparameter_range.h"

namespace ring::search {
namespace {

using Type = Hyperparameter::Type;

SearcherConfig Config(const std::string& name) {
  SearcherConfig c;
  c.name = name;
  c.max_length_batches = 100;
  c.max_trials = 4;
  return c;
}

std::string CreateError(const SearcherConfig& c, const std::map<std::string, Hyperparameter>& space = {}) {
  auto s = Searcher::Create(c, space, 1);
  if (s.ok()) return "accepted";
  EXPECT_EQ(s.status().code(), ErrorCode::kInvalidConfig) << s.status().message();
  return s.status().message();
}

TEST(SearcherConfigTest, GridNeedsCountsOnRanges) {
  Hyperparameter nested;
  nested.type = Type::kNested;
  nested.nested = {{"lr", Range(Type::kLog, -3, -1)}};
  EXPECT_EQ(CreateError(Config("grid"), {{"lr", Range(Type::kDouble, 0, 1)}}),
            "hyperparameters.lr.count is required by the grid searcher");
  EXPECT_EQ(CreateError(Config("grid"), {{"n", Range(Type::kInt, 0, 1)}}),
            "hyperparameters.n.count is required by the grid searcher");
  EXPECT_EQ(CreateError(Config("grid"), {{"opt", nested}}),
            "hyperparameters.opt.lr.count is required by the grid searcher");
  EXPECT_EQ(CreateError(Config("random"), {{"opt", nested}}), "accepted");  // only grid needs counts
  EXPECT_EQ(CreateError(Config("grid"), {{"lr", Range(Type::kDouble, 0, 1, 3)}}), "accepted");
}

TEST(SearcherConfigTest, GridOfMoreThan100000PointsIsRefused) {
  const std::string too_many =
      "hyperparameters: the grid has more than 100000 points; lower the counts or use the random searcher";
  EXPECT_EQ(CreateError(Config("grid"),
                        {{"a", Range(Type::kInt, 0, 999, 1000)}, {"b", Range(Type::kDouble, 0, 1, 100)}}),
            "accepted");
  EXPECT_EQ(CreateError(Config("grid"),
                        {{"a", Range(Type::kInt, 0, 999, 1000)}, {"b", Range(Type::kDouble, 0, 1, 101)}}),
            too_many);
  EXPECT_EQ(CreateError(Config("grid"), {{"a", Range(Type::kDouble, 0, 1, 1'000'000'000'000)}}), too_many);
}

TEST(SearcherConfigTest, HandBuiltConfigsAreCheckedToo) {
  auto c = Config("bayes");
  EXPECT_EQ(CreateError(c),
            "searcher.name must be one of single, grid, random, adaptive_asha, got \"bayes\"");
  c = Config("random");
  c.max_length_batches = -1;
  EXPECT_EQ(CreateError(c), "searcher.max_length.batches must be a positive integer, got -1");
  // No max_length: the trial-driven contract, where the trial decides its length.
  c.max_length_batches = 0;
  EXPECT_EQ(CreateError(c), "accepted");
  EXPECT_EQ(ContractOf(c), SearcherContract::kTrialDriven);
  c = Config("adaptive_asha");
  c.max_length_batches = 0;
  EXPECT_EQ(CreateError(c),
            "searcher.time_metric and searcher.max_time are required by adaptive_asha without "
            "searcher.max_length");
  c.time_metric = "batches";
  EXPECT_EQ(CreateError(c), "searcher.max_time must be a positive integer with searcher.time_metric, got 0");
  c.max_time = 64;
  EXPECT_EQ(CreateError(c), "accepted");
  EXPECT_EQ(ContractOf(c), SearcherContract::kTrialDriven);
  EXPECT_EQ(PlannedLength(c), 64);
  EXPECT_EQ(ContractOf(Config("adaptive_asha")), SearcherContract::kOperations);
  c = Config("random");
  c.max_trials = 0;
  EXPECT_EQ(CreateError(c), "searcher.max_trials must be a positive integer, got 0");
  c.max_trials = 100'001;
  EXPECT_EQ(CreateError(c), "searcher.max_trials must be at most 100000, got 100001");
  c = Config("random");
  c.max_concurrent_trials = -1;
  EXPECT_EQ(CreateError(c), "searcher.max_concurrent_trials must be an integer >= 0, got -1");
  c = Config("adaptive_asha");
  c.divisor = 1;
  EXPECT_EQ(CreateError(c), "searcher.divisor must be greater than 1, got 1.0");
  c = Config("adaptive_asha");
  c.mode = "wild";
  EXPECT_EQ(CreateError(c), "searcher.mode must be one of aggressive, standard, conservative, got \"wild\"");
  c = Config("adaptive_asha");
  c.max_rungs = 0;
  EXPECT_EQ(CreateError(c), "searcher.max_rungs must be a positive integer, got 0");
  c = Config("adaptive_asha");
  c.divisor = 1.01;
  c.max_rungs = 1000;
  c.max_trials = 100'000;
  c.max_length_batches = 1'000'000;
  EXPECT_EQ(
      CreateError(c),
      "searcher.max_rungs: divisor 1.01 gives more than 100 rungs; raise the divisor or lower max_rungs");

  Hyperparameter empty;
  empty.type = Type::kCategorical;
  EXPECT_EQ(CreateError(Config("random"), {{"c", empty}}), "hyperparameters.c.vals must not be empty");
  EXPECT_EQ(CreateError(Config("random"), {{"x", Range(Type::kDouble, 2, 1)}}),
            "hyperparameters.x.maxval must be at least minval (2.0), got 1.0");
  auto bad_base = Range(Type::kLog, 0, 1);
  bad_base.base = 1;
  EXPECT_EQ(CreateError(Config("random"), {{"l", bad_base}}),
            "hyperparameters.l.base must be positive and not 1, got 1.0");
  EXPECT_EQ(CreateError(Config("random"), {{"l", Range(Type::kLog, 0, 400)}}),
            "hyperparameters.l: base ^ maxval (or ^ minval) is too large for a double");
  EXPECT_EQ(CreateError(Config("random"), {{"d", Range(Type::kDouble, -1e308, 1e308)}}),
            "hyperparameters.d spans a range too wide for a double (-1e+308 to 1e+308)");
  // single ignores max_trials.
  c = Config("single");
  c.max_trials = 0;
  EXPECT_EQ(CreateError(c), "accepted");
}

SearcherConfig Asha(int64_t trials, int64_t length, double divisor, int64_t rungs, const std::string& mode,
                    int64_t concurrent = 0) {
  SearcherConfig c = Config("adaptive_asha");
  c.max_trials = trials;
  c.max_length_batches = length;
  c.divisor = divisor;
  c.max_rungs = rungs;
  c.mode = mode;
  c.max_concurrent_trials = concurrent;
  return c;
}

TEST(AshaPlanTest, RungsAreCappedByLengthAndTrials) {
  EXPECT_EQ(AshaRungs(Asha(16, 800, 4, 3, "aggressive")), 3);
  EXPECT_EQ(AshaRungs(Asha(16, 800, 4, 9, "aggressive")), 3);      // floor(log4 16) + 1
  EXPECT_EQ(AshaRungs(Asha(1000, 63, 2, 9, "aggressive")), 6);     // floor(log2 63) + 1
  EXPECT_EQ(AshaRungs(Asha(1000, 1000, 10, 9, "aggressive")), 4);  // exactly 10^3: no log rounding
  EXPECT_EQ(AshaRungs(Asha(1, 1000, 2, 5, "aggressive")), 1);
}

TEST(AshaPlanTest, BracketsSplitsAndLengths) {
  auto plans = PlanAdaptiveAsha(Asha(16, 800, 4, 3, "aggressive", 4));
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].lengths, (std::vector<int64_t>{50, 200, 800}));
  EXPECT_EQ(plans[0].max_trials, 16);
  EXPECT_EQ(plans[0].max_concurrent_trials, 4);

  plans = PlanAdaptiveAsha(Asha(20, 16, 2, 4, "conservative", 7));
  ASSERT_EQ(plans.size(), 4u);
  std::vector<int> rungs;
  std::vector<int64_t> trials, concurrent;
  for (const auto& p : plans) {
    rungs.push_back(p.rungs);
    trials.push_back(p.max_trials);
    concurrent.push_back(p.max_concurrent_trials);
  }
  EXPECT_EQ(rungs, (std::vector<int>{4, 3, 2, 1}));
  EXPECT_EQ(trials, (std::vector<int64_t>{9, 5, 3, 3}));
  EXPECT_EQ(concurrent, (std::vector<int64_t>{2, 2, 2, 1}));
  EXPECT_EQ(plans[3].lengths, std::vector<int64_t>{16});
  EXPECT_EQ(plans[1].lengths, (std::vector<int64_t>{4, 8, 16}));

  // Fewer concurrent trials than brackets: one each.
  plans = PlanAdaptiveAsha(Asha(20, 16, 2, 4, "conservative", 2));
  for (const auto& p : plans) EXPECT_EQ(p.max_concurrent_trials, 1);
  // Standard mode with R = 5: brackets of 5, 4, 3 rungs.
  plans = PlanAdaptiveAsha(Asha(100, 10000, 3, 5, "standard"));
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].rungs, 5);
  EXPECT_EQ(plans[2].rungs, 3);
  // Lengths never fall below one batch.
  plans = PlanAdaptiveAsha(Asha(1000, 5, 1.5, 10, "aggressive"));
  EXPECT_EQ(plans[0].lengths.front(), 1);
  EXPECT_EQ(plans[0].lengths.back(), 5);
}

// searcher.bracket_rungs replaces the brackets mode gives (Determined's
// makeBrackets): the same trial and concurrency splits over those rungs.
TEST(AshaPlanTest, BracketRungsFromTheConfigAreTheBrackets) {
  auto parsed = ParseExperimentConfig(
      "name: x\nentrypoint: ./run\nsearcher:\n  name: adaptive_asha\n  metric: loss\n"
      "  max_trials: 16\n  max_length: 256\n  mode: aggressive\n  max_concurrent_trials: 0\n"
      "  bracket_rungs: [2, 4]\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const SearcherConfig& c = parsed->searcher;
  // Without the list, aggressive mode gives one bracket of R = 3 rungs.
  SearcherConfig by_mode = c;
  by_mode.bracket_rungs.clear();
  ASSERT_EQ(PlanAdaptiveAsha(by_mode).size(), 1u);
  EXPECT_EQ(PlanAdaptiveAsha(by_mode)[0].rungs, 3);

  const auto plans = PlanAdaptiveAsha(c);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].rungs, 4);  // the most rungs first
  EXPECT_EQ(plans[1].rungs, 2);
  // Weights 4^3/4 = 16 and 4/2 = 2: floor(16/18 * 16) = 14 + the remainder 1,
  // and floor(2/18 * 16) = 1; no concurrency limit: max(1, divisor) each.
  EXPECT_EQ(plans[0].max_trials, 15);
  EXPECT_EQ(plans[1].max_trials, 1);
  EXPECT_EQ(plans[0].max_concurrent_trials, 4);
  EXPECT_EQ(plans[1].max_concurrent_trials, 4);
  EXPECT_EQ(plans[0].lengths, (std::vector<int64_t>{4, 16, 64, 256}));
  EXPECT_EQ(plans[1].lengths, (std::vector<int64_t>{64, 256}));
  EXPECT_EQ(CreateError(c), "accepted");

  // Checked again where a config is not parsed from YAML.
  SearcherConfig too_many = c;
  too_many.bracket_rungs = {6};
  EXPECT_EQ(CreateError(too_many),
            "searcher.bracket_rungs[0] is 6 rungs, more than searcher.max_rungs (5); raise max_rungs or give "
            "fewer rungs");
  too_many.bracket_rungs = {0};
  EXPECT_EQ(CreateError(too_many), "searcher.bracket_rungs[0] must be a positive number of rungs, got 0");
  too_many.max_rungs = 200;
  too_many.bracket_rungs = {101};
  EXPECT_EQ(CreateError(too_many), "searcher.bracket_rungs[0] is 101 rungs; adaptive_asha runs at most 100");

  // A divisor whose powers overflow a double still splits the trials.
  SearcherConfig huge = c;
  huge.divisor = 1e300;
  huge.max_trials = 4;
  huge.bracket_rungs = {3, 1};
  const auto split = PlanAdaptiveAsha(huge);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].max_trials, 4);
  EXPECT_EQ(split[1].max_trials, 1);
  EXPECT_EQ(split[0].lengths, (std::vector<int64_t>{1, 1, 256}));
}

// max_length: {epochs: 20} with 60000 records per epoch in batches of 64:
// the rungs are Determined's in epochs (20 / 16, 20 / 4, 20), each counted
// in batches for the operations.
TEST(AshaPlanTest, EpochsArePlannedInEpochs) {
  SearcherConfig c = Asha(16, 18750, 4, 5, "aggressive");
  c.max_length = Length{Length::Unit::kEpochs, 20, false};
  c.records_per_unit = 60000;
  c.global_batch_size = 64;
  EXPECT_EQ(AshaRungs(c), 3);  // floor(log4 20) + 1, not log4 of 18750 batches
  auto plans = PlanAdaptiveAsha(c);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].unit_lengths, (std::vector<int64_t>{1, 5, 20}));
  EXPECT_EQ(plans[0].lengths, (std::vector<int64_t>{938, 4688, 18750}));
  EXPECT_EQ(OperationUnitLengths(c),
            (std::vector<std::pair<int64_t, int64_t>>{{938, 1}, {4688, 5}, {18750, 20}}));
  // A few records round to the same batch: the rungs are planned in batches.
  c = Asha(8, 1, 2, 5, "aggressive");
  c.max_length = Length{Length::Unit::kRecords, 10, false};
  c.records_per_unit = 1;
  c.global_batch_size = 64;
  EXPECT_FALSE(InUnit(c));
  EXPECT_EQ(PlanAdaptiveAsha(c)[0].lengths, std::vector<int64_t>{1});
  EXPECT_TRUE(OperationUnitLengths(c).empty());
  // In batches nothing changes.
  EXPECT_TRUE(OperationUnitLengths(Asha(16, 800, 4, 3, "aggressive")).empty());
}

TEST(SearcherProgressTest, CountsBatchesOfThePlan) {
  auto c = Config("random");
  c.max_trials = 2;
  c.max_concurrent_trials = 1;
  auto s = std::move(Searcher::Create(c, {}, 1)).value();
  EXPECT_EQ(s.Progress({}), 0.0);  // before the start
  s.Start();
  EXPECT_EQ(s.Progress({{1, 50}}), 0.25);
  EXPECT_EQ(s.Progress({{1, 500}}), 0.5);  // capped at the operation's length
  s.TrialExitedEarly(1, ExitReason::kErrored);
  EXPECT_EQ(s.Progress({{1, 10}}), 0.5);  // an ended trial counts in full
  s.ValidationCompleted(2, 1.0, 100);
  EXPECT_EQ(s.Progress({{1, 10}, {2, 100}}), kMaxProgressBeforeShutdown);
  s.TrialClosed(2);
  EXPECT_TRUE(s.IsShutdown());
  EXPECT_EQ(s.Progress({}), 1.0);
}

}  // namespace
}  // namespace ring::search
