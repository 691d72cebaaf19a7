// Sharing the pool over real HTTP with a real agent: pools checked at submit,
// priority, weight and max_slots changed live, the job queue, and agents
// disabled and enabled — through REST and the `ring` CLI.
#include <gtest/gtest.h>

#include <thread>

#include "common/archive.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::scheduling_api {
namespace {

std::string Config(const std::string& resources) {
  return "name: sleeper\nentrypoint: sleep 60\nsearcher:\n  name: single\n  metric: validation_loss\n"
         "  max_length:\n    batches: 10\nmax_restarts: 0\nresources:\n" +
         resources;
}

class SchedulingApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("a1", 2);
    auto tar = PackDirectory(cluster_.MakeModelDir("model", {{"x.sh", "#!/bin/sh\n"}}));
    ASSERT_TRUE(tar.ok());
    model_b64_ = Base64Encode(*tar);
  }
  nlohmann::json Submit(const std::string& config, int* status) {
    return cluster_.PostJson("/api/v1/experiments", {{"config", config}, {"model_definition", model_b64_}},
                             status);
  }
  int Patch(int64_t id, const nlohmann::json& body, nlohmann::json* answer = nullptr) {
    auto r = cluster_.client().Request("PATCH", "/api/v1/experiments/" + std::to_string(id), body.dump());
    EXPECT_TRUE(r.ok());
    if (answer) *answer = nlohmann::json::parse(r->body, nullptr, false);
    return r.ok() ? r->status : 0;
  }
  TestCluster cluster_;
  std::string model_b64_;
};

TEST_F(SchedulingApiTest, PoolsThatDoNotExistOrCanNeverFitAreRefusedAtSubmit) {
  int status = 0;
  auto unknown = Submit(Config("  resource_pool: gpu\n"), &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(unknown.dump().find("no pool named \\\"gpu\\\"; this master has: default"), std::string::npos)
      << unknown.dump();
  auto too_big = Submit(Config("  slots_per_trial: 3\n"), &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(too_big.dump().find("3 slots can never be placed in pool default"), std::string::npos)
      << too_big.dump();
  EXPECT_EQ(cluster_.GetJson("/api/v1/experiments")["total"], 0);
  Submit(Config("  slots_per_trial: 2\n"), &status);
  EXPECT_EQ(status, 201);
}

// resources.is_single_node: the trial must fit one agent. Two agents of 2
// slots take 4 slots as whole agents, but never on one agent.
TEST_F(SchedulingApiTest, SingleNodeLargerThanEveryAgentIsRefusedAtSubmit) {
  cluster_.StartAgent("a2", 2);
  int status = 0;
  // Line 11 of the config: Config() puts resources: on line 9.
  const std::string single = Config("  slots_per_trial: 4\n  is_single_node: true\n");
  auto refused = Submit(single, &status);
  EXPECT_EQ(status, 400) << refused.dump();
  EXPECT_NE(refused.dump().find("experiment.yaml:11: resources.is_single_node: a trial of 4 slots"),
            std::string::npos)
      << refused.dump();
  EXPECT_NE(refused.dump().find("the largest agent in pool default has 2 slots"), std::string::npos)
      << refused.dump();
  auto checked = cluster_.PostJson("/api/v1/experiments/check", {{"config", single}}, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(checked["valid"], false) << checked.dump();
  ASSERT_EQ(checked["errors"].size(), 1u) << checked.dump();
  EXPECT_EQ(checked["errors"][0]["line"], 11) << checked.dump();
  EXPECT_EQ(checked["errors"][0]["path"], "resources.is_single_node") << checked.dump();
  EXPECT_EQ(cluster_.GetJson("/api/v1/experiments")["total"], 0);

  Submit(Config("  slots_per_trial: 4\n"), &status);
  EXPECT_EQ(status, 201) << "without is_single_node 4 slots take both agents";
  Submit(Config("  slots_per_trial: 2\n  is_single_node: true\n"), &status);
  EXPECT_EQ(status, 201) << "2 slots fit one agent";
}

TEST_F(SchedulingApiTest, ResourcesChangeLiveAndBadValuesChangeNothing) {
  int status = 0;
  const int64_t id = Submit(Config("  priority: 50\n  weight: 2\n"), &status)["id"];
  ASSERT_EQ(status, 201);
  auto exp = cluster_.GetJson("/api/v1/experiments/" + std::to_string(id));
  EXPECT_EQ(exp["resources"]["priority"], 50);
  EXPECT_EQ(exp["resources"]["weight"], 2.0);
  EXPECT_TRUE(exp["resources"]["max_slots"].is_null());

  nlohmann::json answer;
  EXPECT_EQ(Patch(id, {{"priority", 0}}, &answer), 400);
  EXPECT_NE(answer.dump().find("priority must be an integer from 1 to 99"), std::string::npos);
  EXPECT_EQ(Patch(id, {{"weight", -1}}), 400);
  EXPECT_EQ(Patch(id, {{"colour", 1}}), 400);
  EXPECT_EQ(Patch(999, {{"priority", 3}}), 404);
  EXPECT_EQ(cluster_.GetJson("/api/v1/experiments/" + std::to_string(id))["resources"]["priority"], 50);

  EXPECT_EQ(Patch(id, {{"priority", 10}, {"max_slots", 4}}, &answer), 200);
  EXPECT_EQ(answer["resources"]["priority"], 10);
  EXPECT_EQ(answer["resources"]["max_slots"], 4);
  auto cli = cluster_.Ring({"experiment", "set", "weight", std::to_string(id), "3.5"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("priority 10, weight 3.5, max slots 4"), std::string::npos) << cli.out;
  EXPECT_EQ(cluster_.Ring({"experiment", "set", "priority", std::to_string(id), "high"}).exit_code, 2);
  EXPECT_EQ(cluster_.Ring({"experiment", "set", "max-slots", std::to_string(id), "none"}).exit_code, 0);
  EXPECT_TRUE(
      cluster_.GetJson("/api/v1/experiments/" + std::to_string(id))["resources"]["max_slots"].is_null());

  // The job queue shows the settings in effect.
  ASSERT_TRUE(TestCluster::WaitFor([&] { return !cluster_.GetJson("/api/v1/jobs")["jobs"].empty(); },
                                   std::chrono::seconds(10)));
  auto job = cluster_.GetJson("/api/v1/jobs")["jobs"][0];
  EXPECT_EQ(job["priority"], 10);
  EXPECT_EQ(job["weight"], 3.5);
  EXPECT_EQ(job["owner"], "admin");  // who submitted it
  EXPECT_FALSE(job["queued_at"].get<std::string>().empty());
  auto jobs = cluster_.Ring({"job", "list"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_NE(jobs.out.find("WHY WAITING"), std::string::npos) << jobs.out;
  EXPECT_NE(jobs.out.find("3.5"), std::string::npos) << jobs.out;
}

// GET /agents pages with limit and offset in the order of the ids; without
// limit it is the whole list, as the web UI and `ring agent list` read it.
TEST_F(SchedulingApiTest, TheAgentsListPagesInTheOrderOfTheIds) {
  cluster_.StartAgent("a2", 1);
  cluster_.StartAgent("a3", 1);
  auto whole = cluster_.GetJson("/api/v1/agents");
  ASSERT_EQ(whole["agents"].size(), 3u) << whole.dump();
  EXPECT_EQ(whole["total"], 3);
  auto page = cluster_.GetJson("/api/v1/agents?limit=1&offset=1");
  ASSERT_EQ(page["agents"].size(), 1u) << page.dump();
  EXPECT_EQ(page["agents"][0]["id"], "a2");
  EXPECT_EQ(page["agents"][0]["slots"].size(), 1u);
  EXPECT_EQ(page["total"], 3);
  EXPECT_EQ(cluster_.GetJson("/api/v1/agents?offset=2")["agents"][0]["id"], "a3");
  EXPECT_EQ(cluster_.GetJson("/api/v1/agents?limit=5&offset=3")["agents"].size(), 0u);
  int status = 0;
  auto bad = cluster_.GetJson("/api/v1/agents?limit=0", &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(bad.dump().find("limit must be an integer from 1 to 1000"), std::string::npos) << bad.dump();
  cluster_.GetJson("/api/v1/agents?offset=x", &status);
  EXPECT_EQ(status, 400);
}

TEST_F(SchedulingApiTest, DisabledAgentsGetNoNewWorkUntilEnabled) {
  auto disabled = cluster_.Ring({"agent", "disable", "a1", "--drain"});
  ASSERT_EQ(disabled.exit_code, 0) << disabled.err;
  auto agent = cluster_.GetJson("/api/v1/agents")["agents"][0];
  EXPECT_FALSE(agent["enabled"]);
  EXPECT_TRUE(agent["draining"]);
  EXPECT_NE(cluster_.Ring({"agent", "list"}).out.find("(draining)"), std::string::npos);

  int status = 0;
  const int64_t id = Submit(Config("  slots_per_trial: 1\n"), &status)["id"];
  ASSERT_EQ(status, 201);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  auto job = cluster_.GetJson("/api/v1/jobs")["jobs"][0];
  EXPECT_EQ(job["state"], "PENDING") << job.dump();
  EXPECT_EQ(cluster_.Ring({"agent", "disable", "nope"}).exit_code, 1);

  ASSERT_EQ(cluster_.Ring({"agent", "enable", "a1"}).exit_code, 0);
  EXPECT_TRUE(
      TestCluster::WaitFor([&] { return cluster_.GetJson("/api/v1/jobs")["jobs"][0]["state"] != "PENDING"; },
                           std::chrono::seconds(10)));
  cluster_.PostJson("/api/v1/experiments/" + std::to_string(id) + "/kill", nlohmann::json::object());
}

}  // namespace
}  // namespace ring::testing::scheduling_api
