// log_policies on a real cluster: a trial that prints an exclude_node
// pattern and fails restarts on another agent; one that prints a
// cancel_retries pattern and fails is not restarted; both show their log
// signal in the REST API and `ring trial describe`.
#include <gtest/gtest.h>

#include "tests/support/test_cluster.h"

namespace ring::testing::log_policies_e2e {
namespace {

nlohmann::json Allocations(TestCluster& c, int64_t trial) {
  return c.GetJson("/api/v1/trials/" + std::to_string(trial) + "/allocations")["allocations"];
}

std::string Config(const std::string& name, const std::string& policies) {
  return "name: " + name +
         "\n"
         "entrypoint: ./train.sh\n"
         "searcher:\n  name: single\n  metric: validation_loss\n"
         "max_restarts: 3\n"
         "log_policies:\n" +
         policies;
}

TEST(LogPoliciesE2E, ExcludeNodeMovesTheRestartAndCancelRetriesEndsTheTrial) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  cluster.StartAgent("a2", 1);
  // The first attempt of each trial prints its trouble and fails; a later one succeeds.
  auto model = cluster.MakeModelDir("model", {{"train.sh",
                                               "#!/bin/sh\n"
                                               "case \"$RING_ALLOCATION_ID\" in\n"
                                               "  *.0) echo \"step 3: $TROUBLE\"; exit 1 ;;\n"
                                               "esac\n"
                                               "echo fine on $RING_AGENT_ID\n"}});

  auto ecc = cluster.WriteFile(
      "ecc.yaml",
      Config("ecc",
             "  - name: ECC Error\n    pattern: uncorrectable ECC error\n"
             "    action: exclude_node\n") +
          "environment:\n  variables:\n    TROUBLE: uncorrectable ECC error encountered on GPU 0\n");
  auto created = cluster.Ring({"experiment", "create", ecc, model});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  cluster.Ring({"experiment", "wait", "1"});
  auto allocs = Allocations(cluster, 1);
  ASSERT_EQ(allocs.size(), 2u) << allocs.dump();
  EXPECT_EQ(allocs[0]["placements"][0]["agent_id"], "a1");  // both free: the first agent by id
  EXPECT_EQ(allocs[0]["exit_code"], 1);
  EXPECT_EQ(allocs[1]["placements"][0]["agent_id"], "a2") << "the restart avoids a1 though a1 is free";
  EXPECT_EQ(allocs[1]["exit_code"], 0);
  auto trial = cluster.GetJson("/api/v1/trials/1");
  EXPECT_EQ(trial["restarts"], 1);
  EXPECT_EQ(trial["log_signal"], "ECC Error");
  ASSERT_EQ(trial["log_policy_matches"].size(), 1u) << trial.dump();
  EXPECT_EQ(trial["log_policy_matches"][0]["node"], "a1");
  EXPECT_EQ(trial["log_policy_matches"][0]["action"], "exclude_node");
  EXPECT_EQ(trial["log_policy_matches"][0]["line"], "step 3: uncorrectable ECC error encountered on GPU 0");

  auto oom = cluster.WriteFile(
      "oom.yaml",
      Config("oom",
             "  - name: CUDA OOM\n    pattern: CUDA out of memory\n"
             "    action: cancel_retries\n") +
          "environment:\n  variables:\n    TROUBLE: \"torch.OutOfMemoryError: CUDA out of memory.\"\n");
  created = cluster.Ring({"experiment", "create", oom, model});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  auto waited = cluster.Ring({"experiment", "wait", "2"});
  EXPECT_EQ(waited.exit_code, 1) << waited.out << waited.err;  // ended, not COMPLETED
  trial = cluster.GetJson("/api/v1/trials/2");
  EXPECT_EQ(trial["state"], "ERROR");
  EXPECT_EQ(trial["restarts"], 0) << "3 restarts were left";
  EXPECT_EQ(Allocations(cluster, 2).size(), 1u);
  EXPECT_EQ(trial["log_signal"], "CUDA OOM");
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/2")["state"], "ERROR");

  auto described = cluster.Ring({"trial", "describe", "2"});
  EXPECT_NE(described.out.find("Log signal:         CUDA OOM"), std::string::npos) << described.out;
  EXPECT_NE(described.out.find("cancel_retries"), std::string::npos) << described.out;
  auto experiment = cluster.Ring({"experiment", "describe", "1"});
  EXPECT_NE(experiment.out.find("LOG SIGNAL"), std::string::npos) << experiment.out;
  EXPECT_NE(experiment.out.find("ECC Error"), std::string::npos) << experiment.out;
}

}  // namespace
}  // namespace ring::testing::log_policies_e2e
