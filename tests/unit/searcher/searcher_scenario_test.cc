// Runs every scenario file under tests/searcher/scenarios: each step's event
// goes to the searcher, and the actions it answers must match the step's
// list, in order. Every step is also replayed on a searcher restored from the
// snapshot taken just before it, which must answer the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/unit/searcher/searcher_scenario_file.h"

namespace ring::search::testing {
namespace {

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(RING_SEARCHER_SCENARIOS_DIR))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Action> Apply(Searcher& s, const ScenarioEvent& e, bool auto_created) {
  std::vector<Action> out;
  switch (e.kind) {
    case ScenarioEvent::Kind::kStart:
      out = s.Start();
      break;
    case ScenarioEvent::Kind::kCreated:
      out = s.TrialCreated(e.id);
      break;
    case ScenarioEvent::Kind::kValidate:
      out = s.ValidationCompleted(e.id, e.metric, e.length);
      break;
    case ScenarioEvent::Kind::kReport:
      out = s.MetricsReported(e.id, e.time, e.metric);
      break;
    case ScenarioEvent::Kind::kClosed:
      out = s.TrialClosed(e.id);
      break;
    case ScenarioEvent::Kind::kExited:
      out = s.TrialExitedEarly(e.id, e.reason);
      break;
  }
  // Like the master: each created trial is announced in the same step.
  for (size_t i = 0; auto_created && i < out.size(); ++i)
    if (const auto* create = std::get_if<CreateTrial>(&out[i])) {
      auto more = s.TrialCreated(create->request_id);
      out.insert(out.end(), more.begin(), more.end());
    }
  return out;
}

std::string Show(const std::vector<Action>& actions) {
  std::string out;
  for (const auto& a : actions) out += "\n    " + ToString(a);
  return out.empty() ? " (none)" : out;
}

std::string Show(const std::vector<std::string>& patterns) {
  std::string out;
  for (const auto& p : patterns) out += "\n    " + p;
  return out.empty() ? " (none)" : out;
}

void CheckState(const Searcher& s, const YAML::Node& check, const std::map<RequestId, int64_t>& trained,
                const std::string& where) {
  if (!check) return;
  for (const auto& kv : check) {
    const auto key = kv.first.as<std::string>();
    const YAML::Node v = kv.second;
    if (key == "shutdown") {
      EXPECT_EQ(s.IsShutdown(), v.as<bool>()) << where;
    } else if (key == "operation") {
      for (const auto& op : v) {
        const auto id = op.first.as<RequestId>();
        if (op.second.IsNull())
          EXPECT_EQ(s.Operation(id), std::nullopt) << where << " trial " << id;
        else
          EXPECT_EQ(s.Operation(id), op.second.as<int64_t>()) << where << " trial " << id;
      }
    } else if (key == "closed") {
      for (const auto& id : v) EXPECT_TRUE(s.Closed(id.as<RequestId>())) << where << " trial " << id;
    } else if (key == "open") {
      for (const auto& id : v) EXPECT_FALSE(s.Closed(id.as<RequestId>())) << where << " trial " << id;
    } else if (key == "bracket") {
      for (const auto& b : v)
        EXPECT_EQ(s.Bracket(b.first.as<RequestId>()), b.second.as<int>()) << where << " trial " << b.first;
    } else if (key == "progress") {
      EXPECT_NEAR(s.Progress(trained), v.as<double>(), 1e-9) << where;
    } else {
      ADD_FAILURE() << where << ": unknown check " << key;
    }
  }
}

class SearcherScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SearcherScenarioTest, ActionsMatchEveryStep) {
  Scenario sc;
  try {
    sc = LoadScenario(GetParam());
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  auto created = sc.parse_error.empty()
                     ? Searcher::Create(sc.config.searcher, sc.config.hyperparameters, sc.seed)
                     : Result<Searcher>(Status(ErrorCode::kInvalidConfig, sc.parse_error));
  if (sc.error) {
    ASSERT_FALSE(created.ok()) << sc.path << ": the config must be refused";
    EXPECT_EQ(created.status().code(), ErrorCode::kInvalidConfig);
    EXPECT_EQ(created.status().message(), *sc.error) << sc.path;
    return;
  }
  ASSERT_TRUE(created.ok()) << sc.path << ": " << created.status().ToString();
  Searcher searcher = std::move(created).value();
  std::map<RequestId, int64_t> trained;
  for (const auto& step : sc.steps) {
    const std::string where = sc.path + ":" + std::to_string(step.line) + ": " + step.text;
    auto restored = Searcher::Restore(sc.config.searcher, sc.config.hyperparameters,
                                      nlohmann::json::parse(searcher.Snapshot().dump()));
    ASSERT_TRUE(restored.ok()) << where << ": " << restored.status().ToString();

    const auto actions = Apply(searcher, step.event, sc.auto_created);
    bool match = actions.size() == step.expect.size();
    for (size_t i = 0; match && i < actions.size(); ++i) match = MatchesPattern(actions[i], step.expect[i]);
    EXPECT_TRUE(match) << where << "\n  expected:" << Show(step.expect) << "\n  actual:" << Show(actions);

    const auto replayed = Apply(*restored, step.event, sc.auto_created);
    EXPECT_EQ(Show(replayed), Show(actions)) << where << ": a restored searcher decided otherwise";
    if (step.event.kind == ScenarioEvent::Kind::kValidate)
      trained[step.event.id] = std::max(trained[step.event.id], step.event.length);
    CheckState(searcher, step.check, trained, where);
    if (::testing::Test::HasFailure()) return;  // later steps would only repeat the first difference
  }
}

std::string ScenarioName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SearcherScenarioTest, ::testing::ValuesIn(ScenarioFiles()), ScenarioName);

TEST(SearcherScenarioFileTest, EventsAndPatternsParse) {
  auto v = ParseScenarioEvent("validate 3 metric 0.25 length 40");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, ScenarioEvent::Kind::kValidate);
  EXPECT_EQ(v->id, 3);
  EXPECT_EQ(v->metric, 0.25);
  EXPECT_EQ(v->length, 40);
  auto e = ParseScenarioEvent("exited 2 invalid_hparams");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reason, ExitReason::kInvalidHparams);
  EXPECT_FALSE(ParseScenarioEvent("validate 3 0.25 40"));
  EXPECT_FALSE(ParseScenarioEvent("exited 2 crashed"));
  EXPECT_FALSE(ParseScenarioEvent("closed 2 now"));
  EXPECT_FALSE(ParseScenarioEvent("finish"));

  const Action create = CreateTrial{4, {{"lr", 0.5}}, 99};
  EXPECT_TRUE(MatchesPattern(create, "create 4"));
  EXPECT_TRUE(MatchesPattern(create, "create 4 {\"lr\":0.5}"));
  EXPECT_TRUE(MatchesPattern(create, "create 4 {\"lr\":0.5} seed 99"));
  EXPECT_FALSE(MatchesPattern(create, "create 4 {\"lr\":0.5} seed 98"));
  EXPECT_FALSE(MatchesPattern(create, "create 4 {\"lr\":0.6}"));
  EXPECT_FALSE(MatchesPattern(create, "create 40"));
  EXPECT_TRUE(MatchesPattern(TrainTo{4, 80}, "train 4 to 80"));
  EXPECT_FALSE(MatchesPattern(TrainTo{4, 80}, "train 4"));
  EXPECT_TRUE(MatchesPattern(Shutdown{true}, "shutdown failure"));
  EXPECT_FALSE(MatchesPattern(Shutdown{true}, "shutdown"));
}

}  // namespace
}  // namespace ring::search::testing
