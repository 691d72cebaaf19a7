// Runs every scenario file under tests/lifecycle/outcomes: the facts of an
// ended allocation and what DecideOutcome must make of them. Each file is
// named by the one rule of docs/failure-model.md it shows (F1.yaml ...):
//
//   description: what the rule says
//   facts: {experiment_state: ACTIVE, cause: COMPLETED, exited_zero: true,
//           preemption_acknowledged: false, verdict: CLOSED, restarts: 0, max_restarts: 5}
//   expect: {rule: F3, trial_state: COMPLETED, requeue: false, restart_counted: false, notice: CLOSED}
//
// or, for several cases of the same rule, `cases: [{description, facts, expect}, ...]`.
// Every fact and expectation is spelled out, except `verdict`, which is given
// exactly when the searcher is asked (FinishedWork). `trial_state: keep`
// means the trial keeps its state.
//
// Besides the files: the rule ids defined in the doc's marked section and the
// files must be the same set, and over the whole space of facts DecideOutcome
// must keep the invariants below (a rule with a file, no requeue of an ending
// trial, restarts counted only with a requeue, the searcher told of every
// trial that ends and asked only when FinishedWork).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "master/lifecycle/allocation_outcome.h"

namespace ring {
namespace {

const RunState kAllRunStates[] = {
    RunState::kActive,        RunState::kPaused,    RunState::kStoppingCompleted, RunState::kStoppingCanceled,
    RunState::kStoppingError, RunState::kCompleted, RunState::kCanceled,          RunState::kError};
const EndCause kAllCauses[] = {EndCause::kCompleted,   EndCause::kFailed,         EndCause::kGangMemberFailed,
                               EndCause::kUserKill,    EndCause::kPaused,         EndCause::kPreempted,
                               EndCause::kAgentLost,   EndCause::kAgentRestarted, EndCause::kInvalidHparams,
                               EndCause::kExitedEarly, EndCause::kFencedOut,      EndCause::kSearcherStopped};
const std::map<std::string, SearcherVerdict> kVerdicts = {{"CLOSED", SearcherVerdict::kClosed},
                                                          {"WAITING", SearcherVerdict::kWaiting},
                                                          {"MORE_WORK", SearcherVerdict::kMoreWork},
                                                          {"EXITED_EARLY", SearcherVerdict::kExitedEarly}};
const std::map<std::string, SearchNotice> kNotices = {{"NONE", SearchNotice::kNone},
                                                      {"CLOSED", SearchNotice::kClosed},
                                                      {"CANCELED", SearchNotice::kCanceled},
                                                      {"ERRORED", SearchNotice::kErrored},
                                                      {"INVALID_HPARAMS", SearchNotice::kInvalidHparams}};

template <typename T>
std::string NameOf(const std::map<std::string, T>& names, T value) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return "?";
}

std::string Show(const OutcomeFacts& f) {
  std::ostringstream out;
  out << "{experiment_state: " << ToString(f.experiment_state) << ", cause: " << ToString(f.cause)
      << ", exited_zero: " << f.exited_zero << ", preemption_acknowledged: " << f.preemption_acknowledged
      << ", verdict: " << (f.verdict ? NameOf(kVerdicts, *f.verdict) : "none") << ", restarts: " << f.restarts
      << ", max_restarts: " << f.max_restarts << ", retries_canceled: " << f.retries_canceled << "}";
  return out.str();
}

std::string Show(const Outcome& o) {
  std::ostringstream out;
  out << "{rule: " << o.rule << ", trial_state: " << (o.trial_state ? ToString(*o.trial_state) : "keep")
      << ", requeue: " << o.requeue << ", restart_counted: " << o.restart_counted
      << ", notice: " << NameOf(kNotices, o.notice) << "}";
  return out.str();
}

struct Case {
  std::string description;
  int line = 0;
  OutcomeFacts facts;
  std::string rule;  // expected; expect.rule is left empty (a view would dangle when Case moves)
  Outcome expect;
};

[[noreturn]] void Fail(const std::string& path, const YAML::Node& node, const std::string& what) {
  throw std::runtime_error(path + ":" + std::to_string(node.Mark().line + 1) + ": " + what);
}

void CheckKeys(const std::string& path, const YAML::Node& node, const std::set<std::string>& allowed) {
  if (!node.IsMap()) Fail(path, node, "expected a mapping");
  for (const auto& kv : node)
    if (!allowed.count(kv.first.as<std::string>()))
      Fail(path, kv.first, "unknown key " + kv.first.as<std::string>());
}

template <typename T>
T Required(const std::string& path, const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  if (!v) Fail(path, node, std::string("missing ") + key);
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    Fail(path, v, std::string("bad value for ") + key);
  }
}

template <typename T>
T Named(const std::string& path, const YAML::Node& node, const char* key, std::optional<T> parsed,
        const char* what) {
  if (!parsed) Fail(path, node[key], "\"" + node[key].as<std::string>() + "\" is not " + what);
  return *parsed;
}

template <typename T>
std::optional<T> Lookup(const std::map<std::string, T>& names, const std::string& name) {
  auto it = names.find(name);
  return it == names.end() ? std::nullopt : std::optional<T>(it->second);
}

OutcomeFacts LoadFacts(const std::string& path, const YAML::Node& n) {
  CheckKeys(path, n,
            {"experiment_state", "cause", "exited_zero", "preemption_acknowledged", "verdict", "restarts",
             "max_restarts", "retries_canceled"});
  OutcomeFacts f;
  f.experiment_state =
      Named(path, n, "experiment_state", ParseRunState(Required<std::string>(path, n, "experiment_state")),
            "a run state");
  f.cause = Named(path, n, "cause", ParseEndCause(Required<std::string>(path, n, "cause")), "an end cause");
  f.exited_zero = Required<bool>(path, n, "exited_zero");
  f.preemption_acknowledged = Required<bool>(path, n, "preemption_acknowledged");
  f.restarts = Required<int64_t>(path, n, "restarts");
  f.max_restarts = Required<int64_t>(path, n, "max_restarts");
  if (n["retries_canceled"]) f.retries_canceled = Required<bool>(path, n, "retries_canceled");
  if (n["verdict"])
    f.verdict = Named(path, n, "verdict", Lookup(kVerdicts, Required<std::string>(path, n, "verdict")),
                      "a verdict (CLOSED, WAITING, MORE_WORK, EXITED_EARLY)");
  if (FinishedWork(f) && !f.verdict)
    Fail(path, n, "the work is finished here: the searcher's verdict is needed");
  if (!FinishedWork(f) && f.verdict)
    Fail(path, n["verdict"], "the searcher is not asked here: drop the verdict");
  return f;
}

Case LoadCase(const std::string& path, const YAML::Node& n, const std::string& description) {
  Case c;
  c.description = description;
  c.line = n.Mark().line + 1;
  if (!n["facts"]) Fail(path, n, "a case needs `facts`");
  c.facts = LoadFacts(path, n["facts"]);
  const YAML::Node e = n["expect"];
  if (!e) Fail(path, n, "a case needs `expect`");
  CheckKeys(path, e, {"rule", "trial_state", "requeue", "restart_counted", "notice"});
  c.rule = Required<std::string>(path, e, "rule");
  const auto state = Required<std::string>(path, e, "trial_state");
  if (state != "keep")
    c.expect.trial_state = Named(path, e, "trial_state", ParseRunState(state), "keep or a run state");
  c.expect.requeue = Required<bool>(path, e, "requeue");
  c.expect.restart_counted = Required<bool>(path, e, "restart_counted");
  c.expect.notice = Named(path, e, "notice", Lookup(kNotices, Required<std::string>(path, e, "notice")),
                          "a notice (NONE, CLOSED, CANCELED, ERRORED, INVALID_HPARAMS)");
  return c;
}

// A file: `description` with `facts` and `expect`, or `description` with
// `cases`, each case {description (optional), facts, expect}.
std::vector<Case> Load(const std::string& path) {
  const YAML::Node root = YAML::LoadFile(path);
  CheckKeys(path, root, {"description", "facts", "expect", "cases"});
  const auto description = root["description"] ? Required<std::string>(path, root, "description") : "";
  if (description.empty()) Fail(path, root, "a scenario says what it shows in `description`");
  std::vector<Case> cases;
  if (root["cases"]) {
    if (root["facts"] || root["expect"]) Fail(path, root, "either `cases` or `facts` and `expect`, not both");
    if (!root["cases"].IsSequence() || root["cases"].size() == 0)
      Fail(path, root["cases"], "`cases` is a list");
    for (const auto& n : root["cases"]) {
      CheckKeys(path, n, {"description", "facts", "expect"});
      cases.push_back(
          LoadCase(path, n, n["description"] ? Required<std::string>(path, n, "description") : description));
    }
  } else {
    cases.push_back(LoadCase(path, root, description));
  }
  return cases;
}

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(RING_OUTCOME_SCENARIOS_DIR))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::set<std::string> FileRules() {
  std::set<std::string> rules;
  for (const auto& file : ScenarioFiles()) rules.insert(std::filesystem::path(file).stem().string());
  return rules;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class AllocationOutcomeScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AllocationOutcomeScenarioTest, Decides) {
  const std::string path = GetParam();
  const std::string rule = std::filesystem::path(path).stem().string();
  std::vector<Case> cases;
  try {
    cases = Load(path);
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(path + ":" + std::to_string(c.line) + ": " + c.description);
    EXPECT_EQ(c.rule, rule) << "a file shows only the rule it is named by";
    const Outcome got = DecideOutcome(c.facts);
    EXPECT_EQ(got.rule, c.rule) << Show(c.facts) << " -> " << Show(got);
    EXPECT_EQ(got.trial_state, c.expect.trial_state) << Show(c.facts) << " -> " << Show(got);
    EXPECT_EQ(got.requeue, c.expect.requeue) << Show(c.facts) << " -> " << Show(got);
    EXPECT_EQ(got.restart_counted, c.expect.restart_counted) << Show(c.facts) << " -> " << Show(got);
    EXPECT_EQ(got.notice, c.expect.notice) << Show(c.facts) << " -> " << Show(got);
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  return std::filesystem::path(info.param).stem().string();
}

INSTANTIATE_TEST_SUITE_P(Outcomes, AllocationOutcomeScenarioTest, ::testing::ValuesIn(ScenarioFiles()),
                         TestName);

// The doc's marked section defines each rule once as **F<n>**; every F<n> the
// doc mentions anywhere is defined there, and the defined ids are exactly the
// files' names. So a rule cannot be added, renumbered or dropped on one side only.
TEST(AllocationOutcomeRulesTest, DocAndFilesNameTheSameRules) {
  const std::string doc = ReadFile(RING_FAILURE_MODEL_DOC);
  const auto begin = doc.find("<!-- outcome-rules: begin");
  const auto end = doc.find("<!-- outcome-rules: end -->");
  ASSERT_NE(begin, std::string::npos) << RING_FAILURE_MODEL_DOC << " has no outcome-rules section";
  ASSERT_NE(end, std::string::npos) << RING_FAILURE_MODEL_DOC << " has no end to its outcome-rules section";
  ASSERT_LT(begin, end);
  const std::string section = doc.substr(begin, end - begin);

  std::set<std::string> defined;
  const std::regex definition(R"(\*\*(F[0-9]+)\*\*)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), definition);
       it != std::sregex_iterator(); ++it)
    EXPECT_TRUE(defined.insert((*it)[1]).second) << (*it)[1] << " is defined twice";
  EXPECT_FALSE(defined.empty());

  const std::regex mention(R"(\bF[0-9]+\b)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), mention); it != std::sregex_iterator(); ++it)
    EXPECT_TRUE(defined.count(it->str())) << "the doc mentions " << it->str() << ", which no rule defines";

  EXPECT_EQ(defined, FileRules()) << "rules in docs/failure-model.md vs files in tests/lifecycle/outcomes";

  const std::string readme = ReadFile(std::string(RING_OUTCOME_SCENARIOS_DIR) + "/README.md");
  for (const auto& rule : FileRules())
    EXPECT_NE(readme.find("`" + rule + ".yaml`"), std::string::npos) << "README.md does not list " << rule;
}

// Every point of the fact space: each experiment state and cause, clean exit
// or not, acknowledged or not, restarts below or at the limit, and every
// verdict (or none) whether or not the searcher would be asked.
std::vector<OutcomeFacts> FactSpace() {
  std::vector<OutcomeFacts> space;
  const std::pair<int64_t, int64_t> kRestarts[] = {{0, 0}, {0, 3}, {2, 3}, {3, 3}};
  std::vector<std::optional<SearcherVerdict>> verdicts = {std::nullopt};
  for (const auto& [name, v] : kVerdicts) verdicts.push_back(v);
  for (RunState state : kAllRunStates)
    for (EndCause cause : kAllCauses)
      for (bool exited_zero : {false, true})
        for (bool acknowledged : {false, true})
          for (const auto& [restarts, max_restarts] : kRestarts)
            for (const auto& verdict : verdicts)
              for (bool canceled : {false, true}) {
                OutcomeFacts f{state,   cause,    exited_zero,  acknowledged,
                               verdict, restarts, max_restarts, canceled};
                if (FinishedWork(f) && !verdict) continue;  // the caller always asks then
                space.push_back(f);
              }
  return space;
}

TEST(AllocationOutcomePropertyTest, HoldsOverTheWholeFactSpace) {
  const std::set<std::string> rules = FileRules();
  const std::set<std::string> by_verdict = {"F3", "F4", "F5", "F6", "F7"};
  std::set<std::string> reached;
  const auto space = FactSpace();
  EXPECT_GT(space.size(), 8u * 11 * 2 * 2 * 4 * 4);
  for (const OutcomeFacts& f : space) {
    SCOPED_TRACE(Show(f));
    const Outcome o = DecideOutcome(f);
    reached.insert(std::string(o.rule));
    EXPECT_TRUE(rules.count(std::string(o.rule))) << o.rule << " has no scenario file";
    const bool ends = o.trial_state && IsTerminal(*o.trial_state);
    EXPECT_FALSE(o.requeue && ends) << "requeues a trial that ends: " << Show(o);
    EXPECT_FALSE(o.requeue && o.trial_state == RunState::kPaused) << "requeues a paused trial: " << Show(o);
    EXPECT_TRUE(!o.restart_counted || o.requeue) << "counts a restart without one: " << Show(o);
    EXPECT_TRUE(!o.restart_counted || f.restarts < f.max_restarts) << "restarts past the limit: " << Show(o);
    EXPECT_FALSE(o.restart_counted && f.retries_canceled) << "restarts after cancel_retries: " << Show(o);
    EXPECT_EQ(o.notice != SearchNotice::kNone, ends)
        << "the searcher hears of every trial that ends, only those: " << Show(o);
    EXPECT_EQ(by_verdict.count(std::string(o.rule)) > 0, FinishedWork(f)) << Show(o);
    if (!FinishedWork(f)) {
      // The searcher is not asked: what it would say changes nothing.
      OutcomeFacts unasked = f;
      unasked.verdict.reset();
      const Outcome u = DecideOutcome(unasked);
      EXPECT_EQ(u.rule, o.rule);
      EXPECT_EQ(u.trial_state, o.trial_state);
      EXPECT_EQ(u.requeue, o.requeue);
      EXPECT_EQ(u.restart_counted, o.restart_counted);
      EXPECT_EQ(u.notice, o.notice);
    }
  }
  EXPECT_EQ(reached, rules) << "every rule with a file is reached by some facts";
}

TEST(AllocationOutcomeDeathTest, FinishedWorkWithoutAVerdictIsACallersBug) {
  OutcomeFacts f;
  f.cause = EndCause::kCompleted;
  f.exited_zero = true;
  ASSERT_TRUE(FinishedWork(f));
  EXPECT_DEATH(DecideOutcome(f), "no searcher verdict");
}

}  // namespace
}  // namespace ring
