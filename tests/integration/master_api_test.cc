// The master alone over real HTTP on 127.0.0.1: validation, error shapes,
// status codes, and that bad input stores nothing.
#include <gtest/gtest.h>

#include "common/archive.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::master_api {
namespace {

const char* kValidConfig = R"(name: sleeper
entrypoint: sleep 60
hyperparameters:
  learning_rate: 0.1
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 100
max_restarts: 0
)";

class MasterApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    auto model = cluster_.MakeModelDir("model", {{"train.sh", "#!/bin/sh\necho hi\n"}});
    auto tar = PackDirectory(model);
    ASSERT_TRUE(tar.ok()) << tar.status().ToString();
    model_b64_ = Base64Encode(*tar);
  }

  int64_t TotalExperiments() { return cluster_.GetJson("/api/v1/experiments").value("total", -1); }

  TestCluster cluster_;
  std::string model_b64_;
};

TEST_F(MasterApiTest, HealthAnswers) {
  int status = 0;
  auto j = cluster_.GetJson("/api/v1/health", &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(j.value("status", ""), "ok");
}

TEST_F(MasterApiTest, CreatesAndListsAnExperiment) {
  int status = 0;
  auto created = cluster_.PostJson("/api/v1/experiments",
                                   {{"config", kValidConfig}, {"model_definition", model_b64_}}, &status);
  ASSERT_EQ(status, 201) << created.dump();
  const int64_t id = created.value("id", 0);
  ASSERT_GT(id, 0);
  auto exp = cluster_.GetJson("/api/v1/experiments/" + std::to_string(id), &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(exp["name"], "sleeper");
  EXPECT_EQ(exp["state"], "ACTIVE");
  EXPECT_EQ(exp["num_trials"], 1);
  EXPECT_EQ(exp["config"], kValidConfig);
  EXPECT_TRUE(exp["ended_at"].is_null());
  auto list = cluster_.GetJson("/api/v1/experiments?limit=10&offset=0");
  EXPECT_EQ(list["total"], 1);
  ASSERT_EQ(list["experiments"].size(), 1u);
  auto trials = cluster_.GetJson("/api/v1/experiments/" + std::to_string(id) + "/trials");
  ASSERT_EQ(trials["total"], 1);
  EXPECT_EQ(trials["trials"][0]["hparams"]["learning_rate"], 0.1);
  // With no agent the trial's allocation waits and says why.
  auto jobs = cluster_.GetJson("/api/v1/jobs");
  ASSERT_EQ(jobs["total"], 1);
  EXPECT_EQ(jobs["jobs"][0]["state"], "PENDING");
  EXPECT_NE(jobs["jobs"][0]["pending_reason"].get<std::string>().find("no agents"), std::string::npos);
  // The sentence `ring job list` and the web UI show: the same, off Slurm.
  EXPECT_EQ(jobs["jobs"][0]["why_waiting"], jobs["jobs"][0]["pending_reason"]);
}

TEST_F(MasterApiTest, MalformedConfigIs400NamingTheFieldAndStoresNothing) {
  std::string bad = std::string(kValidConfig);
  bad.replace(bad.find("max_restarts: 0"), 15, "max_restarts: -2");
  int status = 0;
  auto err =
      cluster_.PostJson("/api/v1/experiments", {{"config", bad}, {"model_definition", model_b64_}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(err["error"]["code"], "invalid_config");
  const std::string message = err["error"]["message"];
  EXPECT_NE(message.find("max_restarts"), std::string::npos) << message;
  EXPECT_NE(message.find(":10:"), std::string::npos) << message;  // the YAML line
  EXPECT_EQ(TotalExperiments(), 0);

  auto typo = cluster_.PostJson(
      "/api/v1/experiments",
      {{"config", std::string(kValidConfig) + "serhcer: {}\n"}, {"model_definition", model_b64_}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(typo["error"]["message"].get<std::string>().find("serhcer"), std::string::npos);
  EXPECT_EQ(TotalExperiments(), 0);
}

TEST_F(MasterApiTest, BadBodiesAre400) {
  int status = 0;
  auto res = cluster_.client().Post("/api/v1/experiments", "{not json");
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 400);
  cluster_.PostJson("/api/v1/experiments", {{"config", kValidConfig}}, &status);
  EXPECT_EQ(status, 400);
  auto err = cluster_.PostJson("/api/v1/experiments", {{"config", kValidConfig}, {"model_definition", "%%%"}},
                               &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(err["error"]["message"].get<std::string>().find("model_definition"), std::string::npos);
  err = cluster_.PostJson("/api/v1/experiments",
                          {{"config", kValidConfig}, {"model_definition", Base64Encode("not a tarball")}},
                          &status);
  EXPECT_EQ(status, 400);
  cluster_.PostJson("/api/v1/experiments", {{"config", 7}, {"model_definition", model_b64_}}, &status);
  EXPECT_EQ(status, 400);
  err = cluster_.PostJson("/api/v1/experiments",
                          {{"config", kValidConfig}, {"model_definition", model_b64_}, {"activte", false}},
                          &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(
      err["error"]["message"],
      "unknown field \"activte\" in the request body (known: config, model_definition, activate, template, "
      "forked_from, project_id)");
  EXPECT_EQ(TotalExperiments(), 0);
  cluster_.GetJson("/api/v1/experiments?limit=abc", &status);
  EXPECT_EQ(status, 400);
  cluster_.GetJson("/api/v1/trials/1/metrics?kind=weird", &status);
  EXPECT_EQ(status, 400);
}

TEST_F(MasterApiTest, UnknownIdsAre404AndBadIds400) {
  int status = 0;
  for (const char* target :
       {"/api/v1/experiments/999", "/api/v1/experiments/999/trials", "/api/v1/trials/999",
        "/api/v1/trials/999/metrics?kind=training", "/api/v1/trials/999/logs", "/api/v1/no/such/thing"}) {
    auto j = cluster_.GetJson(target, &status);
    EXPECT_EQ(status, 404) << target;
    EXPECT_TRUE(j["error"]["message"].is_string()) << target;
  }
  cluster_.GetJson("/api/v1/experiments/abc", &status);
  EXPECT_EQ(status, 400);
  cluster_.PostJson("/api/v1/experiments/999/kill", nlohmann::json::object(), &status);
  EXPECT_EQ(status, 404);
}

TEST_F(MasterApiTest, TrialApiNeedsTheAllocationToken) {
  int status = 0;
  cluster_.PostJson("/api/v1/experiments", {{"config", kValidConfig}, {"model_definition", model_b64_}},
                    &status);
  ASSERT_EQ(status, 201);
  nlohmann::json report = {
      {"reports", {{{"kind", "training"}, {"batches", 1}, {"metrics", {{"loss", 1.0}}}}}}};
  cluster_.PostJson("/api/v1/allocations/1.0/metrics", report, &status);
  EXPECT_EQ(status, 401);
  cluster_.PostJson("/api/v1/allocations/77.0/metrics", report, &status);
  EXPECT_EQ(status, 404);
  auto model = cluster_.client().Get("/api/v1/allocations/1.0/model_definition");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->status, 401);
}

TEST_F(MasterApiTest, OversizedBodyIs413AndTheMasterKeepsServing) {
  std::string huge(9 << 20, 'x');
  auto res = cluster_.client().Request("POST", "/api/v1/experiments/1/kill", huge);
  if (res.ok()) {
    EXPECT_EQ(res->status, 413);
  }
  int status = 0;
  cluster_.GetJson("/api/v1/health", &status);
  EXPECT_EQ(status, 200);
}

TEST_F(MasterApiTest, KilledExperimentIsCanceledAndArchivable) {
  int status = 0;
  auto created = cluster_.PostJson("/api/v1/experiments",
                                   {{"config", kValidConfig}, {"model_definition", model_b64_}}, &status);
  const std::string id = std::to_string(created.value("id", 0));
  auto killed = cluster_.PostJson("/api/v1/experiments/" + id + "/kill", nlohmann::json::object(), &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(killed["state"], "CANCELED");
  auto trial = cluster_.GetJson("/api/v1/experiments/" + id + "/trials")["trials"][0];
  EXPECT_EQ(trial["state"], "CANCELED");
  auto archived =
      cluster_.PostJson("/api/v1/experiments/" + id + "/archive", nlohmann::json::object(), &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(archived["archived"], true);
}

TEST_F(MasterApiTest, StateSurvivesAMasterRestart) {
  int status = 0;
  cluster_.PostJson("/api/v1/experiments", {{"config", kValidConfig}, {"model_definition", model_b64_}},
                    &status);
  ASSERT_EQ(status, 201);
  cluster_.StopMaster();
  cluster_.StartMaster();
  EXPECT_EQ(TotalExperiments(), 1);
  auto jobs = cluster_.GetJson("/api/v1/jobs");
  EXPECT_EQ(jobs["total"], 1);  // the pending allocation is queued again
}

}  // namespace
}  // namespace ring::testing::master_api
