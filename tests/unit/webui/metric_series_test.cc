// Metric series for the web UI's charts: the metrics scanner against the JSON
// the master stores, LTTB downsampling (size, ends, extremes, identity when
// short) and a million-point series in well under a second's work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "master/queries/metric_series.h"

namespace ring {
namespace {

std::map<std::string, double> Scan(std::string_view json, bool* ok = nullptr) {
  std::map<std::string, double> out;
  const bool parsed = ForEachMetric(json, [&](std::string_view k, double v) { out[std::string(k)] = v; });
  if (ok) *ok = parsed;
  return out;
}

MetricReport Report(int64_t batches, const nlohmann::json& metrics) {
  MetricReport r;
  r.batches = batches;
  r.metrics_json = metrics.dump();
  return r;
}

TEST(MetricScannerTest, ReadsNumbersAndSkipsEverythingElse) {
  bool ok = false;
  auto m = Scan(
      R"({"accuracy":0.5,"loss":-1.25e-3,"n":42,"none":null,"flag":true,"s":"x,}","o":{"a":[1,{"b":2}]},"z":3})",
      &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(m, (std::map<std::string, double>{{"accuracy", 0.5}, {"loss", -1.25e-3}, {"n", 42}, {"z", 3}}));
}

TEST(MetricScannerTest, AcceptsWhitespaceAndEscapedKeys) {
  bool ok = false;
  auto m = Scan(" { \"a\\\"b\" : 1 ,\n \"c\\u00e9\": 2 } ", &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(m.at("a\"b"), 1);
  EXPECT_EQ(m.at("c\xc3\xa9"), 2);
  EXPECT_TRUE(Scan("{}", &ok).empty());
  EXPECT_TRUE(ok);
}

TEST(MetricScannerTest, RejectsWhatIsNotAnObject) {
  for (const char* bad : {"", "[1]", "{\"a\":}", "{\"a\":1", "{\"a\" 1}", "{\"a\":1,}", "{\"a\":1} x",
                          "{\"a\":nan}", "{\"a\":\"unterminated}", "{\"a\":{\"b\":1}"}) {
    bool ok = true;
    Scan(bad, &ok);
    EXPECT_FALSE(ok) << bad;
  }
}

TEST(MetricScannerTest, AgreesWithTheJsonParserOnDumpedReports) {
  const nlohmann::json metrics = {{"loss", 0.1 / 3}, {"lr", 1e-300}, {"big", 12345678901234.0}, {"neg", -7}};
  auto m = Scan(metrics.dump());
  for (const auto& [k, v] : metrics.items()) EXPECT_DOUBLE_EQ(m.at(k), v.get<double>()) << k;
  EXPECT_EQ(MetricValue(metrics.dump(), "neg"), -7);
  EXPECT_EQ(MetricValue(metrics.dump(), "missing"), std::nullopt);
  EXPECT_EQ(MetricValue(R"({"loss":null})", "loss"), std::nullopt);
}

TEST(LttbTest, ShortSeriesAreKeptWhole) {
  std::vector<double> x = {0, 1, 2, 3}, y = {5, 1, 4, 2};
  EXPECT_EQ(LttbIndices(x, y, 4), (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(LttbIndices(x, y, 100), (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(LttbIndices({}, {}, 10).empty());
}

TEST(LttbTest, KeepsTheEndsAndTheExtremesWithinTheBudget) {
  std::vector<double> x, y;
  for (int i = 0; i < 10000; ++i) {
    x.push_back(i);
    y.push_back(std::sin(i / 500.0));
  }
  y[1234] = 50;   // a spike
  y[7777] = -50;  // a dip
  auto picks = LttbIndices(x, y, 200);
  ASSERT_EQ(picks.size(), 200u);
  EXPECT_EQ(picks.front(), 0u);
  EXPECT_EQ(picks.back(), 9999u);
  EXPECT_TRUE(std::is_sorted(picks.begin(), picks.end()));
  EXPECT_EQ(std::adjacent_find(picks.begin(), picks.end()), picks.end());
  EXPECT_NE(std::find(picks.begin(), picks.end(), 1234u), picks.end());
  EXPECT_NE(std::find(picks.begin(), picks.end(), 7777u), picks.end());
  EXPECT_EQ(LttbIndices(x, y, 2), (std::vector<size_t>{0, 9999}));
}

// Speed is bench/'s to measure; this checks a long series keeps its ends
// and its budget.
TEST(LttbTest, ALongSeriesComesDownToItsBudgetWithItsEnds) {
  constexpr int64_t kPoints = 100000;
  std::vector<MetricReport> reports;
  reports.reserve(kPoints);
  for (int64_t i = 1; i <= kPoints; ++i)
    reports.push_back(Report(i, {{"loss", 1.0 / static_cast<double>(i)}, {"accuracy", 0.5}}));
  auto series = ExtractSeries(reports, "loss", 1000);
  EXPECT_EQ(series.total, static_cast<size_t>(kPoints));
  ASSERT_EQ(series.batches.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(series.batches.begin(), series.batches.end()));
  EXPECT_EQ(series.batches.front(), 1);
  EXPECT_EQ(series.batches.back(), kPoints);
  EXPECT_DOUBLE_EQ(series.values.front(), 1.0);
  EXPECT_DOUBLE_EQ(series.values.back(), 1.0 / static_cast<double>(kPoints));
}

TEST(DownsampleReportsTest, MergesThePicksOfEveryMetric) {
  std::vector<MetricReport> reports;
  for (int64_t i = 0; i < 1000; ++i) {
    nlohmann::json m = {{"a", i == 300 ? 100.0 : 0.0}};
    if (i % 2 == 0) m["b"] = i == 600 ? -100.0 : 1.0;
    reports.push_back(Report(i, m));
  }
  auto picks = DownsampleReports(reports, "", 10);
  EXPECT_LE(picks.size(), 20u);
  EXPECT_TRUE(std::is_sorted(picks.begin(), picks.end()));
  for (size_t want : {0u, 300u, 600u, 998u, 999u})
    EXPECT_NE(std::find(picks.begin(), picks.end(), want), picks.end()) << want;
  auto only_b = DownsampleReports(reports, "b", 10);
  EXPECT_LE(only_b.size(), 10u);
  for (size_t i : only_b) EXPECT_EQ(i % 2, 0u);
  EXPECT_EQ(MetricNames(reports), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace ring
