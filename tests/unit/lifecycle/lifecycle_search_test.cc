// The controller driving real searchers: trials created by the searcher's
// decisions, operations asked for and completed, trials that wait for a
// promotion without holding slots, invalid hyperparameters, and a master
// restart in the middle of a search.
#include <gtest/gtest.h>

#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace {

using testing::RecordingChannel;

std::string SearchConfig(const std::string& searcher) {
  return "name: search\nentrypoint: ./run.sh\nhyperparameters:\n  lr:\n    type: double\n    minval: 0.1\n"
         "    maxval: 1.0\n    count: 3\nreproducibility:\n  experiment_seed: 11\nsearcher:\n" +
         searcher;
}

class ControllerSearchTest : public testing::LifecycleFixture {
 protected:
  nlohmann::json Op(const proto::Start& s, std::optional<int64_t> after = std::nullopt) {
    auto op = controller_.SearcherOperation(s.allocation_id, s.allocation_token, after);
    EXPECT_TRUE(op.ok()) << op.status().ToString();
    return op.ok() ? *op : nlohmann::json();
  }
  bool Complete(const proto::Start& s, int64_t length, double metric) {
    nlohmann::json body = {
        {"reports",
         {{{"kind", "validation"}, {"batches", length}, {"metrics", {{"validation_loss", metric}}}}}}};
    EXPECT_TRUE(controller_.ReportMetrics(s.allocation_id, s.allocation_token, body).ok());
    auto accepted = controller_.CompleteSearcherOperation(s.allocation_id, s.allocation_token,
                                                          {{"length", length}, {"metric", metric}});
    EXPECT_TRUE(accepted.ok()) << accepted.status().ToString();
    return accepted.ok() && *accepted;
  }
  void Exit(const std::string& agent, const proto::Start& s, int code) {
    controller_.OnAgentMessage(
        agent, proto::StateChange{s.allocation_id, 0, proto::ProcessState::kExited, code, std::nullopt, ""},
        now_);
  }
  RunState TrialState(int64_t id) { return store_.GetTrial(id)->state; }
  // The operation the REST API reads from another thread: what the
  // lifecycle published, which it must have once the searcher ran.
  std::optional<int64_t> Published(int64_t experiment, int64_t trial) {
    auto op = controller_.lifecycle().searches().operations_view().Of(experiment, trial);
    EXPECT_TRUE(op.has_value()) << "experiment " << experiment << " published no operations";
    return op ? *op : std::nullopt;
  }
  std::optional<proto::Start> StartOf(const RecordingChannel& c, const std::string& allocation) {
    for (const auto& s : c.Of<proto::Start>())
      if (s.allocation_id == allocation) return s;
    return std::nullopt;
  }
};

TEST_F(ControllerSearchTest, RandomSearchRunsMaxTrialsWithinTheConcurrencyLimit) {
  const int64_t exp = CreateFrom(
      SearchConfig("  name: random\n  metric: validation_loss\n  max_trials: 3\n  max_concurrent_trials: 2\n"
                   "  max_length:\n    batches: 100\n"));
  auto trials = *store_.ListTrials(exp);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].request_id, 1);
  EXPECT_NE(trials[0].hparams_json, trials[1].hparams_json);
  EXPECT_NE(trials[0].seed, trials[1].seed);

  auto agent = Connect("agent-1", 4);
  auto starts = agent->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0].environment.at("RING_SEARCHER_METRIC"), "validation_loss");
  EXPECT_EQ(Op(starts[0])["operation"]["length"], 100);
  EXPECT_EQ(Op(starts[0], 100)["operation"], nullptr);  // not completed yet
  EXPECT_FALSE(Op(starts[0], 100)["done"]);
  EXPECT_EQ(controller_.TrialOperation(exp, 1), 100);

  EXPECT_TRUE(Complete(starts[0], 100, 0.4));
  EXPECT_FALSE(Complete(starts[0], 100, 0.4));  // a retry changes nothing
  EXPECT_TRUE(Op(starts[0], 100)["done"]);
  Exit("agent-1", starts[0], 0);
  EXPECT_EQ(TrialState(1), RunState::kCompleted);
  ASSERT_EQ(store_.ListTrials(exp)->size(), 3u);  // the next trial replaces the closed one
  ASSERT_EQ(agent->Of<proto::Start>().size(), 3u);

  EXPECT_TRUE(Complete(starts[1], 100, 0.2));
  Exit("agent-1", starts[1], 0);
  const auto third = agent->Of<proto::Start>()[2];
  EXPECT_TRUE(Complete(third, 100, 0.3));
  Exit("agent-1", third, 0);
  auto done = *store_.GetExperiment(exp);
  EXPECT_EQ(done.state, RunState::kCompleted);
  EXPECT_DOUBLE_EQ(done.progress, 1.0);
  EXPECT_EQ(done.best_trial_id, 2);
  EXPECT_DOUBLE_EQ(*done.best_validation, 0.2);
  EXPECT_EQ(store_.ListTrials(exp)->size(), 3u);
}

// Aggressive ASHA with divisor 2 over 2 trials: rungs at 50 and 100 batches.
// The first trial to finish rung 0 waits without its slot; the second one is
// worse, so the first is promoted and restarts from its checkpoint, and the
// second is closed.
// The trial gets max_length as the config gives it, and what each operation
// length in batches is in that unit: ASHA's rungs in epochs.
TEST_F(ControllerSearchTest, TheTrialGetsMaxLengthInTheConfigsUnit) {
  const int64_t exp = CreateFrom(
      "name: search\nentrypoint: ./run.sh\nrecords_per_epoch: 60000\nhyperparameters:\n"
      "  global_batch_size: 64\nsearcher:\n  name: adaptive_asha\n  metric: validation_loss\n"
      "  max_trials: 16\n  mode: aggressive\n  max_concurrent_trials: 1\n  max_length:\n    epochs: 20\n");
  auto agent = Connect("agent-1", 1);
  auto starts = agent->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 1u);
  const auto& env = starts[0].environment;
  EXPECT_EQ(env.at("RING_MAX_LENGTH_BATCHES"), "18750");
  EXPECT_EQ(env.at("RING_MAX_LENGTH_UNIT"), "epochs");
  EXPECT_EQ(env.at("RING_MAX_LENGTH_VALUE"), "20");
  EXPECT_EQ(env.at("RING_OPERATION_LENGTHS"), "938:1,4688:5,18750:20");
  EXPECT_EQ(Op(starts[0])["operation"]["length"], 938);  // the first rung, 1 epoch
  EXPECT_EQ(controller_.TrialOperation(exp, 1), 938);

  // A bare integer counts batches and has no unit, as in Determined.
  CreateFrom(SearchConfig("  name: single\n  metric: validation_loss\n  max_length: 30\n"));
  auto second = Connect("agent-2", 1)->Of<proto::Start>();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].environment.at("RING_MAX_LENGTH_VALUE"), "30");
  EXPECT_EQ(second[0].environment.count("RING_MAX_LENGTH_UNIT"), 0u);
  EXPECT_EQ(second[0].environment.count("RING_OPERATION_LENGTHS"), 0u);
}

TEST_F(ControllerSearchTest, AshaPromotesAWaitingTrialFromItsCheckpoint) {
  const int64_t exp = CreateFrom(SearchConfig(
      "  name: adaptive_asha\n  metric: validation_loss\n  max_trials: 2\n  max_concurrent_trials: 2\n"
      "  mode: aggressive\n  divisor: 2\n  max_rungs: 2\n  max_length:\n    batches: 100\n"));
  auto agent = Connect("agent-1", 2);
  auto first = *StartOf(*agent, "1.0");
  auto second = *StartOf(*agent, "2.0");
  EXPECT_EQ(Op(first)["operation"]["length"], 50);

  EXPECT_TRUE(Complete(first, 50, 0.5));
  EXPECT_TRUE(Op(first, 50)["done"]);  // nothing to do now
  Exit("agent-1", first, 0);
  EXPECT_EQ(TrialState(1), RunState::kActive);  // waiting, holding no slot
  EXPECT_FALSE(controller_.TrialOperation(exp, 1).has_value());
  EXPECT_FALSE(Published(exp, 1).has_value());
  EXPECT_EQ(Published(exp, 2), 50);

  EXPECT_TRUE(Complete(second, 50, 0.9));
  EXPECT_EQ(controller_.TrialOperation(exp, 1), 100);  // promoted
  EXPECT_EQ(Published(exp, 1), 100);
  auto resumed = StartOf(*agent, "1.1");
  ASSERT_TRUE(resumed.has_value());
  EXPECT_EQ(Op(*resumed)["operation"]["length"], 100);
  EXPECT_TRUE(Op(second, 50)["done"]);  // closed
  Exit("agent-1", second, 0);
  EXPECT_EQ(TrialState(2), RunState::kCompleted);

  EXPECT_TRUE(Complete(*resumed, 100, 0.1));
  EXPECT_TRUE(Op(*resumed, 100)["done"]);
  Exit("agent-1", *resumed, 0);
  EXPECT_EQ(TrialState(1), RunState::kCompleted);
  EXPECT_EQ(store_.GetExperiment(exp)->state, RunState::kCompleted);
  EXPECT_EQ(store_.GetExperiment(exp)->best_trial_id, 1);
}

TEST_F(ControllerSearchTest, InvalidHyperparametersAreReplacedAndNotCounted) {
  const int64_t exp = CreateFrom(
      SearchConfig("  name: random\n  metric: validation_loss\n  max_trials: 2\n  max_concurrent_trials: 1\n"
                   "  max_length:\n    batches: 10\n"));
  auto agent = Connect("agent-1", 1);
  auto first = agent->Of<proto::Start>()[0];
  ASSERT_TRUE(
      controller_
          .ReportInvalidHparams(first.allocation_id, first.allocation_token, {{"message", "lr too large"}})
          .ok());
  EXPECT_EQ(
      controller_.ReportInvalidHparams(first.allocation_id, first.allocation_token, {{"message", 3}}).code(),
      ErrorCode::kInvalidArgument);
  Exit("agent-1", first, 2);
  EXPECT_EQ(TrialState(1), RunState::kError);
  EXPECT_EQ(store_.GetTrial(1)->restarts, 0);
  EXPECT_EQ(store_.GetAllocation("1.0")->exit_reason, "invalid hyperparameters: lr too large");
  EXPECT_EQ(store_.GetAllocation("1.0")->end_cause, EndCause::kInvalidHparams);
  for (int i = 1; i <= 2; ++i) {
    auto s = agent->Of<proto::Start>()[i];
    EXPECT_TRUE(Complete(s, 10, 0.5));
    Exit("agent-1", s, 0);
  }
  EXPECT_EQ(store_.ListTrials(exp)->size(), 3u);
  EXPECT_EQ(store_.GetExperiment(exp)->state, RunState::kCompleted);
}

TEST_F(ControllerSearchTest, CompletionNeedsAFiniteMetricAndAPositiveLength) {
  CreateFrom(SearchConfig("  name: single\n  metric: validation_loss\n  max_length:\n    batches: 10\n"));
  auto agent = Connect("agent-1", 1);
  auto s = agent->Of<proto::Start>()[0];
  for (const auto& body : {nlohmann::json{{"length", 10}}, nlohmann::json{{"length", 0}, {"metric", 1.0}},
                           nlohmann::json{{"length", 10}, {"metric", "low"}}, nlohmann::json::array()})
    EXPECT_EQ(
        controller_.CompleteSearcherOperation(s.allocation_id, s.allocation_token, body).status().code(),
        ErrorCode::kInvalidArgument)
        << body.dump();
  EXPECT_FALSE(
      controller_
          .CompleteSearcherOperation(s.allocation_id, s.allocation_token, {{"length", 7}, {"metric", 1.0}})
          .value());  // not its operation
  EXPECT_EQ(controller_.CompleteSearcherOperation(s.allocation_id, "wrong", {{"length", 10}, {"metric", 1.0}})
                .status()
                .code(),
            ErrorCode::kUnauthenticated);
}

TEST_F(ControllerSearchTest, GridWithoutCountIsRefusedAndNothingIsStored) {
  auto id = controller_.CreateExperiment(
      "name: g\nentrypoint: ./run.sh\nhyperparameters:\n  lr:\n    type: double\n    minval: 0.1\n"
      "    maxval: 1.0\nsearcher:\n  name: grid\n  metric: validation_loss\n  max_length:\n    batches: 10\n",
      model_, true, "alice");
  EXPECT_EQ(id.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_NE(id.status().message().find("count"), std::string::npos) << id.status().message();
  EXPECT_EQ(store_.ListExperiments(10, 0)->total, 0);
}

TEST_F(ControllerSearchTest, ARestartedMasterContinuesTheSearchFromItsSnapshot) {
  const int64_t exp =
      CreateFrom(SearchConfig("  name: grid\n  metric: validation_loss\n  max_concurrent_trials: 1\n  "
                              "max_length:\n    batches: 10\n"));
  auto agent = Connect("agent-1", 1);
  auto first = agent->Of<proto::Start>()[0];
  EXPECT_TRUE(Complete(first, 10, 0.5));
  Exit("agent-1", first, 0);
  ASSERT_EQ(store_.ListTrials(exp)->size(), 2u);
  const auto second = agent->Of<proto::Start>().at(1);  // running when the master goes away

  // A new controller on the same store, as after a master restart; the agent
  // comes back with the second trial still running.
  testing::LifecycleDriver restarted(store_, options_);
  ASSERT_TRUE(restarted.Recover(now_).ok());
  auto channel = std::make_shared<RecordingChannel>();
  proto::Hello hello{"agent-1", "default",        "10.0.0.1",
                     "test",    {{0, "cpu", ""}}, {{second.allocation_id, 0, 42}}};
  restarted.OnAgentHello(hello, channel, now_);
  EXPECT_EQ(store_.ListTrials(exp)->size(), 2u);  // nothing created twice
  EXPECT_EQ(restarted.SearcherOperation(second.allocation_id, second.allocation_token, std::nullopt)
                .value()["operation"]["length"],
            10);
  auto finish = [&](const proto::Start& s) {
    EXPECT_TRUE(
        restarted
            .CompleteSearcherOperation(s.allocation_id, s.allocation_token, {{"length", 10}, {"metric", 0.1}})
            .value());
    restarted.OnAgentMessage(
        "agent-1", proto::StateChange{s.allocation_id, 0, proto::ProcessState::kExited, 0, std::nullopt, ""},
        now_);
  };
  finish(second);
  ASSERT_EQ(channel->Of<proto::Start>().size(), 1u);  // the third grid point
  finish(channel->Of<proto::Start>()[0]);
  EXPECT_EQ(store_.ListTrials(exp)->size(), 3u);  // the grid's three points, each once
  EXPECT_EQ(store_.GetExperiment(exp)->state, RunState::kCompleted);
}

}  // namespace
}  // namespace ring
