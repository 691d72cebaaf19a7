// The experiments list's query: parameters checked with messages that name
// them, filters by state, owner, label, name and archived, sorting with nulls
// last and ties by id, and the config summary the list shows.
#include <gtest/gtest.h>

#include "master/api/experiment_query.h"

namespace ring {
namespace {

std::string Config(const std::string& name, const std::string& labels, bool smaller = true) {
  return "name: " + name + "\nentrypoint: sh run.sh\nlabels: [" + labels +
         "]\nsearcher:\n  name: single\n  metric: acc\n  smaller_is_better: " + (smaller ? "true" : "false") +
         "\n  max_length:\n    batches: 10\n";
}

ExperimentRow Row(int64_t id, const std::string& name, RunState state, const std::string& labels = "",
                  std::optional<double> best = std::nullopt, bool archived = false,
                  const std::string& owner = "alice") {
  ExperimentRow r;
  r.record.id = id;
  r.record.name = name;
  r.record.state = state;
  r.record.owner = owner;
  r.record.archived = archived;
  r.record.best_validation = best;
  r.record.progress = static_cast<double>(id) / 10;
  r.record.created_at = "2026-01-0" + std::to_string(id) + "T00:00:00.000Z";
  r.record.config_yaml = Config(name, labels);
  return r;
}

std::vector<int64_t> Ids(const std::vector<ExperimentRow>& rows) {
  std::vector<int64_t> out;
  for (const auto& r : rows) out.push_back(r.record.id);
  return out;
}

std::vector<ExperimentRow> Sample() {
  return {Row(1, "mnist-base", RunState::kCompleted, "vision, baseline", 0.3),
          Row(2, "Mnist-wide", RunState::kActive, "vision", std::nullopt),
          Row(3, "bert", RunState::kPaused, "nlp", 0.1, false, "bob"),
          Row(4, "old", RunState::kCanceled, "", 0.2, true)};
}

TEST(ExperimentQueryTest, ParsesEveryParameter) {
  auto q = ParseExperimentQuery({{"state", "ACTIVE,PAUSED"},
                                 {"owner", "bob"},
                                 {"label", "nlp"},
                                 {"name", "BeRt"},
                                 {"archived", "false"},
                                 {"sort", "best_validation"},
                                 {"order", "desc"},
                                 {"limit", "20"},
                                 {"offset", "40"}});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->states, (std::set<RunState>{RunState::kActive, RunState::kPaused}));
  EXPECT_EQ(q->owner, "bob");
  EXPECT_EQ(q->label, "nlp");
  EXPECT_EQ(q->name, "bert");
  EXPECT_EQ(q->archived, false);
  EXPECT_EQ(q->sort, "best_validation");
  EXPECT_TRUE(q->descending);
  EXPECT_EQ(q->limit, 20);
  EXPECT_EQ(q->offset, 40);
  auto defaults = ParseExperimentQuery({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->sort, "id");
  EXPECT_EQ(defaults->limit, 100);
  EXPECT_FALSE(defaults->archived.has_value());
}

TEST(ExperimentQueryTest, BadParametersAreNamed) {
  for (auto [key, value] : std::vector<std::pair<std::string, std::string>>{{"state", "RUNNING"},
                                                                            {"archived", "maybe"},
                                                                            {"sort", "color"},
                                                                            {"order", "up"},
                                                                            {"limit", "0"},
                                                                            {"limit", "1001"},
                                                                            {"offset", "-1"},
                                                                            {"offset", "x"}}) {
    auto q = ParseExperimentQuery({{key, value}});
    ASSERT_FALSE(q.ok()) << key << "=" << value;
    EXPECT_EQ(q.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(q.status().message().find(key), std::string::npos) << q.status().message();
    EXPECT_NE(q.status().message().find(value), std::string::npos) << q.status().message();
  }
}

TEST(ExperimentQueryTest, Filters) {
  auto none = [](int64_t) -> int64_t { return 0; };
  auto select = [&](std::map<std::string, std::string> params) {
    return Ids(SelectExperiments(Sample(), *ParseExperimentQuery(params), none));
  };
  EXPECT_EQ(select({}), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(select({{"state", "ACTIVE,COMPLETED"}}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(select({{"owner", "bob"}}), (std::vector<int64_t>{3}));
  EXPECT_EQ(select({{"label", "vision"}}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(select({{"label", "baseline"}}), (std::vector<int64_t>{1}));
  EXPECT_EQ(select({{"name", "MNIST"}}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(select({{"archived", "false"}}), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(select({{"archived", "true"}}), (std::vector<int64_t>{4}));
  EXPECT_EQ(select({{"label", "vision"}, {"state", "ACTIVE"}}), (std::vector<int64_t>{2}));
}

TEST(ExperimentQueryTest, SortsWithNullsLastAndTiesById) {
  auto trials = [](int64_t id) -> int64_t { return id == 3 ? 10 : 1; };
  auto sorted = [&](std::string sort, std::string order) {
    return Ids(
        SelectExperiments(Sample(), *ParseExperimentQuery({{"sort", sort}, {"order", order}}), trials));
  };
  EXPECT_EQ(sorted("best_validation", "asc"), (std::vector<int64_t>{3, 4, 1, 2}));
  EXPECT_EQ(sorted("best_validation", "desc"), (std::vector<int64_t>{1, 4, 3, 2}));
  EXPECT_EQ(sorted("name", "asc"), (std::vector<int64_t>{3, 1, 2, 4}));  // case-insensitive
  EXPECT_EQ(sorted("id", "desc"), (std::vector<int64_t>{4, 3, 2, 1}));
  EXPECT_EQ(sorted("state", "asc"), (std::vector<int64_t>{2, 4, 1, 3}));
  EXPECT_EQ(sorted("num_trials", "desc"), (std::vector<int64_t>{3, 4, 2, 1}));
  EXPECT_EQ(sorted("progress", "desc"), (std::vector<int64_t>{4, 3, 2, 1}));
  EXPECT_EQ(sorted("created_at", "asc"), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(ExperimentQueryTest, SummaryAndFacetsComeFromTheConfigs) {
  auto s = SummarizeConfig(Config("x", "a, b", false));
  EXPECT_EQ(s.labels, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.metric, "acc");
  EXPECT_FALSE(s.smaller_is_better);
  EXPECT_EQ(s.searcher, "single");
  auto broken = SummarizeConfig("not: [valid");
  EXPECT_TRUE(broken.labels.empty());
  EXPECT_EQ(broken.metric, "validation_loss");
  nlohmann::json view = nlohmann::json::object();
  AddConfigSummary(view, s);
  EXPECT_EQ(view["searcher"]["metric"], "acc");
  EXPECT_EQ(view["labels"], nlohmann::json::array({"a", "b"}));
  auto facets = ExperimentFacets(Sample());
  EXPECT_EQ(facets["owners"], nlohmann::json::array({"alice", "bob"}));
  EXPECT_EQ(facets["labels"], nlohmann::json::array({"baseline", "nlp", "vision"}));
}

}  // namespace
}  // namespace ring
