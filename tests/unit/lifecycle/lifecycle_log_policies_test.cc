// log_policies on the lifecycle with the in-memory store: a matched line is
// stored once per (policy, node) and names the trial's log signal;
// cancel_retries makes the next failure final (F15); exclude_node keeps the
// trial's later allocations off that node, also across a new lifecycle.
#include <gtest/gtest.h>

#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring::log_policies_test {
namespace {

using namespace std::chrono_literals;

std::string Config(const std::string& policies, int max_restarts = 3) {
  return "name: logpol\nentrypoint: ./run.sh\nhyperparameters:\n  lr: 0.5\nsearcher:\n  name: single\n"
         "  metric: loss\n  max_length:\n    batches: 100\nmax_restarts: " +
         std::to_string(max_restarts) + "\nlog_policies:\n" + policies;
}

class LogPoliciesTest : public testing::LifecycleFixture {
 protected:
  void Print(const std::string& agent, const std::string& alloc, int64_t seq, const std::string& line) {
    controller_.OnAgentMessage(agent, proto::LogBatch{alloc, 0, seq, {{1, "stdout", line}}}, now_);
  }
  void Fail(const std::string& agent, const std::string& alloc) {
    Report(agent, alloc, proto::ProcessState::kExited, 1);
  }
};

TEST_F(LogPoliciesTest, CancelRetriesMakesTheNextFailureFinal) {
  const int64_t exp = CreateFrom(Config("  - name: OOM\n    pattern: out of memory\n    action: cancel_retries\n"));
  Connect("agent-1", 1);
  Print("agent-1", "1.0", 1, "step 1 ok");
  EXPECT_TRUE(store_.ListLogPolicyMatches(1)->empty());
  Print("agent-1", "1.0", 2, "RuntimeError: CUDA out of memory. Tried to allocate 2 GiB");
  Print("agent-1", "1.0", 3, "out of memory again");  // the same policy on the same node: kept once
  // The default "CUDA OOM" label matches the same line, before the configured policies.
  auto matches = store_.ListLogPolicyMatches(1);
  ASSERT_EQ(matches->size(), 2u);
  EXPECT_EQ((*matches)[0].policy, "CUDA OOM");
  EXPECT_EQ((*matches)[0].action, LogPolicyAction::kNone);
  EXPECT_EQ((*matches)[1].policy, "OOM");
  EXPECT_EQ((*matches)[1].action, LogPolicyAction::kCancelRetries);
  EXPECT_EQ((*matches)[1].node, "agent-1");
  EXPECT_EQ((*matches)[1].allocation_id, "1.0");
  EXPECT_EQ((*matches)[1].line, "RuntimeError: CUDA out of memory. Tried to allocate 2 GiB");
  EXPECT_EQ(store_.GetTrial(1)->log_signal, "OOM");

  Fail("agent-1", "1.0");
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kError);
  EXPECT_EQ(store_.GetTrial(1)->restarts, 0);  // 3 were left
  EXPECT_EQ(store_.GetExperiment(exp)->state, RunState::kError);
}

TEST_F(LogPoliciesTest, WithoutAMatchAFailureRestartsAsUsual) {
  CreateFrom(Config("  - name: OOM\n    pattern: out of memory\n    action: cancel_retries\n"));
  Connect("agent-1", 1);
  Print("agent-1", "1.0", 1, "ValueError: bad shape");
  Fail("agent-1", "1.0");
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kActive);
  EXPECT_EQ(store_.GetTrial(1)->restarts, 1);
  EXPECT_EQ(store_.GetTrial(1)->log_signal, "");
}

TEST_F(LogPoliciesTest, DefaultPoliciesLabelOnlyAndCanBeTurnedOff) {
  CreateFrom(Config("  - name: ECC Error\n"));  // turns the default ECC policy off
  Connect("agent-1", 1);
  Print("agent-1", "1.0", 1, "uncorrectable ECC error encountered");
  Print("agent-1", "1.0", 2, "torch.OutOfMemoryError: CUDA out of memory.");
  auto matches = store_.ListLogPolicyMatches(1);
  ASSERT_EQ(matches->size(), 1u);
  EXPECT_EQ((*matches)[0].policy, "CUDA OOM");
  EXPECT_EQ((*matches)[0].action, LogPolicyAction::kNone);
  Fail("agent-1", "1.0");
  EXPECT_EQ(store_.GetTrial(1)->restarts, 1);  // a label changes nothing
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kActive);
}

TEST_F(LogPoliciesTest, ExcludeNodeKeepsLaterAllocationsOffThatNode) {
  CreateFrom(Config("  - name: ECC\n    pattern: ECC error\n    action: exclude_node\n"));
  auto one = Connect("agent-1", 1);
  ASSERT_EQ(one->Of<proto::Start>().size(), 1u);
  Print("agent-1", "1.0", 1, "uncorrectable ECC error encountered");
  Fail("agent-1", "1.0");
  // Requeued (a failure with restarts left), but not on agent-1 although it is free.
  EXPECT_EQ(store_.GetTrial(1)->restarts, 1);
  EXPECT_EQ(one->Of<proto::Start>().size(), 1u);
  auto jobs = controller_.JobsJson();
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_TRUE(jobs[0]["pending_reason"].is_string()) << jobs.dump();
  EXPECT_NE(jobs[0]["pending_reason"].get<std::string>().find("never on agent agent-1"), std::string::npos)
      << jobs[0].dump();
  auto two = Connect("agent-2", 1);
  ASSERT_EQ(two->Of<proto::Start>().size(), 1u);
  EXPECT_EQ(two->Of<proto::Start>()[0].allocation_id, "1.1");
}

TEST_F(LogPoliciesTest, ExclusionsOutliveTheMaster) {
  CreateFrom(Config("  - pattern: ECC error\n    action: exclude_node\n"));  // the older form: no name
  Connect("agent-1", 1);
  Print("agent-1", "1.0", 1, "ECC error on GPU 0");
  Fail("agent-1", "1.0");
  EXPECT_EQ(store_.GetTrial(1)->log_signal, "ECC error");  // a policy without a name shows its pattern

  // A new lifecycle over the same store: the queued restart still avoids agent-1.
  testing::LifecycleDriver again(store_, options_);
  ASSERT_TRUE(again.Recover(now_).ok());
  auto one = std::make_shared<testing::RecordingChannel>();
  again.OnAgentHello({"agent-1", "default", "10.0.0.1", "test", {{0, "cpu", ""}}, {}}, one, now_);
  EXPECT_TRUE(one->Of<proto::Start>().empty());
  auto two = std::make_shared<testing::RecordingChannel>();
  again.OnAgentHello({"agent-2", "default", "10.0.0.2", "test", {{0, "cpu", ""}}, {}}, two, now_);
  ASSERT_EQ(two->Of<proto::Start>().size(), 1u);
}

TEST_F(LogPoliciesTest, LinesOfOtherTrialsDoNotCount) {
  CreateFrom(Config("  - name: OOM\n    pattern: out of memory\n    action: cancel_retries\n"));
  Connect("agent-1", 1);
  // A report for an allocation that is not live is dropped before matching.
  Print("agent-1", "9.0", 1, "out of memory");
  EXPECT_TRUE(store_.ListLogPolicyMatches(1)->empty());
}

}  // namespace
}  // namespace ring::log_policies_test
