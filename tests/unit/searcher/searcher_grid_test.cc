// Grid enumeration for every hyperparameter type, sampling, the generator,
// and the reproducibility of random searches by seed.
#include <gtest/gtest.h>

#include <set>

#include "common/searcher/hparam_grid.h"
#include "common/searcher/hparam_sampler.h"
#include "common/searcher/rng.h"
#include "common/searcher/searcher.h"
#include "tests/unit/searcher/hyperparameter_range.h"

namespace ring::search {
namespace {

using Type = Hyperparameter::Type;
using nlohmann::json;

Hyperparameter Const(json value) {
  Hyperparameter h;
  h.value = std::move(value);
  return h;
}

Hyperparameter Categorical(std::vector<json> vals) {
  Hyperparameter h;
  h.type = Type::kCategorical;
  h.vals = std::move(vals);
  return h;
}

TEST(HparamGridTest, ValuesOfEachType) {
  EXPECT_EQ(GridValues(Const(json{1, 2})), std::vector<json>{json({1, 2})});
  EXPECT_EQ(GridValues(Categorical({"a", 3, true})), (std::vector<json>{"a", 3, true}));
  EXPECT_EQ(GridValues(Range(Type::kInt, 1, 9, 5)), (std::vector<json>{1, 3, 5, 7, 9}));
  EXPECT_EQ(GridValues(Range(Type::kInt, 0, 10, 4)), (std::vector<json>{0, 3, 7, 10}));  // 3.33, 6.67 rounded
  EXPECT_EQ(GridValues(Range(Type::kDouble, 0, 1, 5)), (std::vector<json>{0.0, 0.25, 0.5, 0.75, 1.0}));
  EXPECT_EQ(GridValues(Range(Type::kLog, -3, -1, 3)), (std::vector<json>{0.001, 0.01, 0.1}));
  Hyperparameter base2 = Range(Type::kLog, 0, 4, 3);
  base2.base = 2;
  EXPECT_EQ(GridValues(base2), (std::vector<json>{1.0, 4.0, 16.0}));
}

TEST(HparamGridTest, IntCountBeyondTheRangeGivesEachIntegerOnce) {
  EXPECT_EQ(GridValues(Range(Type::kInt, 2, 5, 100)), (std::vector<json>{2, 3, 4, 5}));
  EXPECT_EQ(GridValues(Range(Type::kInt, 7, 7, 3)), (std::vector<json>{7}));
  EXPECT_EQ(GridSize({{"a", Range(Type::kInt, 2, 5, 100)}}), 4);
}

TEST(HparamGridTest, CountOfOneIsTheMiddle) {
  EXPECT_EQ(GridValues(Range(Type::kInt, 1, 4, 1)), std::vector<json>{3});  // 2.5 rounds away from zero
  EXPECT_EQ(GridValues(Range(Type::kDouble, 0, 1, 1)), std::vector<json>{0.5});
  EXPECT_EQ(GridValues(Range(Type::kLog, -4, -2, 1)), std::vector<json>{0.001});
}

TEST(HparamGridTest, EndpointsAreExact) {
  auto values = GridValues(Range(Type::kDouble, 0.1, 0.7, 7));
  ASSERT_EQ(values.size(), 7u);
  EXPECT_EQ(values.front(), 0.1);
  EXPECT_EQ(values.back(), 0.7);
}

TEST(HparamGridTest, CartesianProductInKeyOrderWithNestedMaps) {
  Hyperparameter nested;
  nested.type = Type::kNested;
  nested.nested = {{"momentum", Categorical({0.0, 0.9})}, {"name", Const("sgd")}};
  const std::map<std::string, Hyperparameter> space{
      {"b", Range(Type::kInt, 1, 2, 2)}, {"a", Categorical({"x", "y", "z"})}, {"opt", nested}};
  EXPECT_EQ(GridSize(space), 3 * 2 * 2);
  const auto points = GridPoints(space);
  ASSERT_EQ(points.size(), 12u);
  EXPECT_EQ(points[0], json::parse(R"({"a":"x","b":1,"opt":{"momentum":0.0,"name":"sgd"}})"));
  EXPECT_EQ(points[1], json::parse(R"({"a":"x","b":1,"opt":{"momentum":0.9,"name":"sgd"}})"));
  EXPECT_EQ(points[2], json::parse(R"({"a":"x","b":2,"opt":{"momentum":0.0,"name":"sgd"}})"));
  EXPECT_EQ(points[11], json::parse(R"({"a":"z","b":2,"opt":{"momentum":0.9,"name":"sgd"}})"));
  EXPECT_EQ(std::set<json>(points.begin(), points.end()).size(), 12u);
}

TEST(HparamGridTest, SizesAndLimits) {
  EXPECT_EQ(GridSize({}), 1);
  EXPECT_EQ(GridPoints({}), std::vector<json>{json::object()});
  EXPECT_EQ(GridSize({{"c", Const(5)}}), 1);
  EXPECT_EQ(GridSize({{"d", Range(Type::kDouble, 0, 1, 7)}, {"l", Range(Type::kLog, 1, 3, 4)}}), 28);
  EXPECT_EQ(GridSize({{"d", Range(Type::kDouble, 0, 1)}}), 0);  // no count: no grid
  // Saturates instead of overflowing.
  std::map<std::string, Hyperparameter> huge;
  for (const char* k : {"a", "b", "c", "d", "e"}) huge[k] = Range(Type::kInt, 0, 1e9, 1'000'000'000);
  EXPECT_EQ(GridSize(huge), kMaxGridPoints + 1);
}

TEST(HparamSamplerTest, EachTypeStaysInItsRange) {
  Hyperparameter nested;
  nested.type = Type::kNested;
  nested.nested = {{"k", Categorical({"p", "q"})}};
  const std::map<std::string, Hyperparameter> space{{"c", Const("fixed")},
                                                    {"i", Range(Type::kInt, -2, 2)},
                                                    {"d", Range(Type::kDouble, 0.5, 0.75)},
                                                    {"l", Range(Type::kLog, -3, -1)},
                                                    {"cat", Categorical({1, 2, 3})},
                                                    {"n", nested}};
  Rng rng(5);
  std::set<int64_t> ints;
  std::set<json> cats;
  for (int i = 0; i < 2000; ++i) {
    const json p = SampleHparams(space, rng);
    EXPECT_EQ(p["c"], "fixed");
    ints.insert(p["i"].get<int64_t>());
    EXPECT_GE(p["d"].get<double>(), 0.5);
    EXPECT_LT(p["d"].get<double>(), 0.75);
    EXPECT_GE(p["l"].get<double>(), 0.001 * (1 - 1e-12));
    EXPECT_LT(p["l"].get<double>(), 0.1);
    cats.insert(p["cat"]);
    EXPECT_TRUE(p["n"]["k"] == "p" || p["n"]["k"] == "q");
  }
  EXPECT_EQ(ints, (std::set<int64_t>{-2, -1, 0, 1, 2}));
  EXPECT_EQ(cats.size(), 3u);
}

TEST(RngTest, KnownSequenceAndExactRoundTrip) {
  // xoshiro256** seeded by SplitMix64(0): the same on every platform.
  Rng a(0);
  const uint64_t first = a.Next();
  EXPECT_EQ(Rng(0).Next(), first);
  EXPECT_NE(Rng(1).Next(), first);
  for (int i = 0; i < 10; ++i) a.Next();
  Rng b = Rng::FromJson(json::parse(a.ToJson().dump()));
  EXPECT_EQ(a, b);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.Next(), b.Next());
  EXPECT_ANY_THROW(Rng::FromJson(json::array({"0", "0", "0", "0"})));
  EXPECT_ANY_THROW(Rng::FromJson(
      json::array({"0000000000000000", "0000000000000000", "0000000000000000", "0000000000000000"})));
  EXPECT_ANY_THROW(Rng::FromJson(json::array({1, 2, 3, 4})));
}

TEST(RngTest, UniformIntCoversTheRangeIncludingExtremes) {
  Rng rng(3);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(rng.UniformInt(-1, 1));
  EXPECT_EQ(seen, (std::set<int64_t>{-1, 0, 1}));
  for (int i = 0; i < 100; ++i) {
    const int64_t v = rng.UniformInt(INT64_MIN, INT64_MAX);
    (void)v;  // any value is in range; must not hang or overflow
  }
  EXPECT_EQ(rng.UniformInt(5, 5), 5);
  EXPECT_EQ(rng.Uniform(2.0, 2.0), 2.0);
}

SearcherConfig RandomConfig(int64_t trials) {
  SearcherConfig c;
  c.name = "random";
  c.max_trials = trials;
  c.max_length_batches = 10;
  return c;
}

std::vector<CreateTrial> Creates(const std::vector<Action>& actions) {
  std::vector<CreateTrial> out;
  for (const auto& a : actions)
    if (const auto* c = std::get_if<CreateTrial>(&a)) out.push_back(*c);
  return out;
}

TEST(RandomSearchTest, SameSeedSameTrialsDifferentSeedDifferent) {
  const std::map<std::string, Hyperparameter> space{{"lr", Range(Type::kLog, -5, -1)},
                                                    {"units", Range(Type::kInt, 1, 1000)},
                                                    {"act", Categorical({"relu", "tanh", "gelu"})}};
  auto run = [&](uint64_t seed) { return Creates(Searcher::Create(RandomConfig(20), space, seed)->Start()); };
  const auto a = run(1234), b = run(1234), c = run(1235);
  ASSERT_EQ(a.size(), 20u);
  EXPECT_EQ(a, b);
  int same_hparams = 0, same_seed = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    same_hparams += a[i].hparams == c[i].hparams;
    same_seed += a[i].seed == c[i].seed;
    EXPECT_GE(a[i].seed, 0);
    EXPECT_LE(a[i].seed, 0x7fffffff);
  }
  EXPECT_EQ(same_hparams, 0);
  EXPECT_EQ(same_seed, 0);
  std::set<int64_t> seeds;
  for (const auto& t : a) seeds.insert(t.seed);
  EXPECT_EQ(seeds.size(), a.size());  // per-trial seeds differ
}

TEST(RandomSearchTest, ReplacementsContinueTheSameSequence) {
  const std::map<std::string, Hyperparameter> space{{"x", Range(Type::kDouble, 0, 1)}};
  auto limited = RandomConfig(4);
  limited.max_concurrent_trials = 1;
  // One at a time or all at once: the n-th trial gets the same draw.
  auto all = Creates(Searcher::Create(RandomConfig(4), space, 99)->Start());
  auto s = std::move(Searcher::Create(limited, space, 99)).value();
  std::vector<CreateTrial> one_by_one = Creates(s.Start());
  for (RequestId id = 1; id < 4; ++id) {
    s.ValidationCompleted(id, 0.5, 10);
    auto next = Creates(s.TrialClosed(id));
    one_by_one.insert(one_by_one.end(), next.begin(), next.end());
  }
  EXPECT_EQ(one_by_one, all);
}

TEST(ActionTest, TextAndJsonForms) {
  EXPECT_EQ(ToString(CreateTrial{3, {{"lr", 0.1}}, 77}), "create 3 {\"lr\":0.1} seed 77");
  EXPECT_EQ(ToString(TrainTo{3, 400}), "train 3 to 400");
  EXPECT_EQ(ToString(CloseTrial{3}), "close 3");
  EXPECT_EQ(ToString(Shutdown{}), "shutdown");
  EXPECT_EQ(ToString(Shutdown{true}), "shutdown failure");
  EXPECT_EQ(ToJson(TrainTo{3, 400}), json::parse(R"({"type":"train","request_id":3,"length":400})"));
  EXPECT_EQ(ToJson(CreateTrial{1, {{"a", 1}}, 5}),
            json::parse(R"({"type":"create","request_id":1,"hparams":{"a":1},"seed":5})"));
  EXPECT_EQ(ToJson(CloseTrial{2}), json::parse(R"({"type":"close","request_id":2})"));
  EXPECT_EQ(ToJson(Shutdown{true}), json::parse(R"({"type":"shutdown","failure":true})"));
  for (auto r : {ExitReason::kErrored, ExitReason::kInvalidHparams, ExitReason::kCanceled})
    EXPECT_EQ(ParseExitReason(ToString(r)), r);
  EXPECT_EQ(ParseExitReason("crashed"), std::nullopt);
}

}  // namespace
}  // namespace ring::search
