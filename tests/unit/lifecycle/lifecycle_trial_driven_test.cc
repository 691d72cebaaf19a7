// The trial-driven searcher contract through the real lifecycle: trials get
// no operations, adaptive_asha with time_metric ranks their validations and
// stops the ones it does not keep through preemption (SEARCHER_STOPPED, F14:
// COMPLETED, not requeued), and a trial of a search without max_length
// completes when it exits 0.
#include <gtest/gtest.h>

#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace {

class TrialDrivenTest : public testing::LifecycleFixture {
 protected:
  void Validate(const proto::Start& s, int64_t batches, double loss) {
    nlohmann::json body = {{"reports",
                            {{{"kind", "validation"},
                              {"batches", batches},
                              {"metrics", {{"loss", loss}, {"batches", batches}}}}}}};
    auto r = controller_.ReportMetrics(s.allocation_id, s.allocation_token, body);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  bool Preempting(const proto::Start& s) {
    auto p = controller_.PreemptionRequested(s.allocation_id, s.allocation_token);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() && *p;
  }
  void Exit(const std::string& agent, const proto::Start& s, int code) {
    controller_.OnAgentMessage(
        agent, proto::StateChange{s.allocation_id, 0, proto::ProcessState::kExited, code, std::nullopt, ""},
        now_);
  }
  int64_t TrialOf(const proto::Start& s) { return s.trial_id; }
  RunState TrialState(int64_t id) { return store_.GetTrial(id)->state; }
  std::optional<EndCause> LastEndCause(int64_t trial) {
    auto allocs = store_.ListAllocations(trial);
    if (!allocs.ok() || allocs->empty()) return std::nullopt;
    return allocs->back().end_cause;
  }
};

TEST_F(TrialDrivenTest, AshaWithTimeMetricStopsTrialsThroughPreemption) {
  // One bracket, rungs at 4 and 8 batches; 3 trials, 2 at a time.
  const int64_t exp = CreateFrom(
      "name: asha\nentrypoint: ./run.sh\nhyperparameters:\n  lr: {type: double, minval: 0.1, maxval: 1.0}\n"
      "reproducibility: {experiment_seed: 5}\nsearcher:\n  name: adaptive_asha\n  metric: loss\n"
      "  time_metric: batches\n  max_time: 8\n  max_trials: 3\n  max_concurrent_trials: 2\n  divisor: 2\n"
      "  max_rungs: 2\n  mode: aggressive\n");
  auto agent = Connect("agent-1", 4);
  auto starts = agent->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 2u);  // queued on creation: no operation to ask for
  const proto::Start a = starts[0];
  const proto::Start b = starts[1];
  EXPECT_EQ(controller_.TrialOperation(exp, TrialOf(a)), std::nullopt);

  Validate(a, 2, 0.5);  // below rung 0
  Validate(a, 4, 0.5);  // best of rung 0: keeps training
  EXPECT_FALSE(Preempting(a));
  Validate(b, 4, 0.9);  // second of 2 at rung 0: stopped, a third trial starts
  EXPECT_TRUE(Preempting(b));
  EXPECT_FALSE(Preempting(a));
  starts = agent->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 3u);
  const proto::Start c = starts[2];

  // b acknowledges, checkpoints and exits 0: stopped by the searcher, done.
  ASSERT_TRUE(controller_.AcknowledgePreemption(b.allocation_id, b.allocation_token).ok());
  Exit("agent-1", b, 0);
  EXPECT_EQ(TrialState(TrialOf(b)), RunState::kCompleted);
  EXPECT_EQ(LastEndCause(TrialOf(b)), EndCause::kSearcherStopped);
  EXPECT_EQ(store_.ListAllocations(TrialOf(b))->size(), 1u);  // not requeued

  // a reaches the top rung: stopped too; it exits 0 without acknowledging.
  Validate(a, 8, 0.3);
  EXPECT_TRUE(Preempting(a));
  Exit("agent-1", a, 0);
  EXPECT_EQ(TrialState(TrialOf(a)), RunState::kCompleted);
  EXPECT_EQ(LastEndCause(TrialOf(a)), EndCause::kSearcherStopped);

  // c ends on its own before any rung: its work is done; the search is over.
  EXPECT_EQ(store_.GetExperiment(exp)->state, RunState::kActive);
  Exit("agent-1", c, 0);
  EXPECT_EQ(TrialState(TrialOf(c)), RunState::kCompleted);
  EXPECT_EQ(LastEndCause(TrialOf(c)), EndCause::kCompleted);
  EXPECT_EQ(agent->Of<proto::Start>().size(), 3u);
  EXPECT_EQ(store_.GetExperiment(exp)->state, RunState::kCompleted);
}

TEST_F(TrialDrivenTest, AStoppedTrialThatIgnoresTheRequestIsKilledAndStillCompleted) {
  CreateFrom(
      "name: asha\nentrypoint: ./run.sh\nhyperparameters:\n  lr: {type: double, minval: 0.1, maxval: 1.0}\n"
      "max_restarts: 0\npreemption_timeout: 1\nsearcher:\n  name: adaptive_asha\n  metric: loss\n"
      "  time_metric: batches\n  max_time: 4\n  max_trials: 1\n  divisor: 2\n  max_rungs: 1\n");
  auto agent = Connect("agent-1", 1);
  auto starts = agent->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 1u);
  Validate(starts[0], 4, 0.5);  // the only rung is the top one
  ASSERT_TRUE(Preempting(starts[0]));
  // Past the 1 s preemption timeout, well within the agent's heartbeat timeout.
  controller_.Tick(now_ + std::chrono::seconds(3));
  // Killed at the preemption timeout; a late exit report changes nothing.
  Exit("agent-1", starts[0], 137);
  EXPECT_EQ(TrialState(TrialOf(starts[0])), RunState::kCompleted);  // not ERROR, not requeued
  EXPECT_EQ(LastEndCause(TrialOf(starts[0])), EndCause::kSearcherStopped);
}

TEST_F(TrialDrivenTest, WithoutMaxLengthTheTrialCompletesWhenItExitsZero) {
  const int64_t exp =
      CreateFrom("name: one\nentrypoint: ./run.sh\nsearcher:\n  name: single\n  metric: loss\n");
  auto agent = Connect("agent-1", 1);
  auto starts = agent->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 1u);
  Validate(starts[0], 1000, 0.2);  // any length: nothing is stopped
  EXPECT_FALSE(Preempting(starts[0]));
  Exit("agent-1", starts[0], 0);
  EXPECT_EQ(TrialState(TrialOf(starts[0])), RunState::kCompleted);
  EXPECT_EQ(store_.GetExperiment(exp)->state, RunState::kCompleted);
}

TEST_F(TrialDrivenTest, AFailedTrialIsRestartedAsUsual) {
  CreateFrom("name: one\nentrypoint: ./run.sh\nmax_restarts: 1\nsearcher:\n  name: single\n  metric: loss\n");
  auto agent = Connect("agent-1", 1);
  auto starts = agent->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 1u);
  Exit("agent-1", starts[0], 3);
  ASSERT_EQ(agent->Of<proto::Start>().size(), 2u);  // F12: restarted
  Exit("agent-1", agent->Of<proto::Start>()[1], 0);
  EXPECT_EQ(TrialState(TrialOf(starts[0])), RunState::kCompleted);
}

}  // namespace
}  // namespace ring
