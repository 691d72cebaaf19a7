// RunCli end to end against an in-test HTTP server: exit codes, error lines,
// tables, wait, logs and agents.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/run_cli.h"
#include "tests/support/fake_http_server.h"
#include "tests/unit/cli/cli_result.h"

namespace ring::cli {
namespace {

using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

class CliRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("RING_CLI_POLL_MS", "5", 1);
    ::unsetenv("RING_MASTER");
    ::unsetenv("RING_MAX_MODEL_SIZE");
  }
  static CliResult Run(std::vector<std::string> args) { return RunRing(std::move(args)); }
};

TEST_F(CliRunTest, HelpDocumentsExitCodes) {
  auto r = Run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3  the master could not be reached"), std::string::npos) << r.out;
}

TEST_F(CliRunTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Run({}).code, 2);
  EXPECT_EQ(Run({"frobnicate"}).code, 2);
  EXPECT_EQ(Run({"experiment"}).code, 2);
  EXPECT_EQ(Run({"experiment", "wait"}).code, 2);
  EXPECT_EQ(Run({"experiment", "wait", "abc"}).code, 2);
  EXPECT_EQ(Run({"experiment", "describe", "-3"}).code, 2);
  EXPECT_EQ(Run({"experiment", "create", "/nonexistent/exp.yaml", "/tmp"}).code, 2);
  EXPECT_EQ(Run({"trial", "logs", "1", "--rank", "x"}).code, 2);
  auto bad_url = Run({"-m", "ftp://host", "agent", "list"});
  EXPECT_EQ(bad_url.code, 2);
  EXPECT_NE(bad_url.err.find("ring: error: bad master URL"), std::string::npos) << bad_url.err;
  std::string config = ::testing::TempDir() + "/cli_usage.yaml";
  std::ofstream(config) << "name: x\n";
  auto bad_size = Run({"experiment", "create", config, ::testing::TempDir(), "--max-model-size", "lots"});
  EXPECT_EQ(bad_size.code, 2);
  EXPECT_NE(bad_size.err.find("--max-model-size"), std::string::npos) << bad_size.err;
}

TEST_F(CliRunTest, UnreachableMasterExitsThree) {
  const ring::testing::HeldPort closed;
  std::string url = "http://127.0.0.1:" + std::to_string(closed.port());
  auto r = Run({"-m", url, "experiment", "list"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err.rfind("ring: error: cannot reach the master at " + url, 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);  // one line
  ::setenv("RING_MASTER", url.c_str(), 1);
  EXPECT_EQ(Run({"agent", "list"}).code, 3);  // from the environment
}

TEST_F(CliRunTest, ServerErrorsPrintOneLineAndExitOne) {
  FakeHttpServer server([](const FakeRequest&) {
    return FakeResponse{404, R"({"error":{"code":"not_found","message":"experiment 9 not found"}})"};
  });
  auto r = Run({"-m", server.url(), "experiment", "describe", "9"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "ring: error: experiment 9 not found\n");
}

TEST_F(CliRunTest, ListsExperimentsAsATableOrJson) {
  const std::string body =
      R"({"experiments":[{"id":1,"name":"quadratic","state":"COMPLETED","owner":"ann","progress":1.0,)"
      R"("num_trials":1,"best_validation":0.00995,"created_at":"2024-05-01T10:00:00Z"}],"total":3})";
  FakeHttpServer server([&](const FakeRequest&) { return FakeResponse{200, body}; });
  auto r = Run({"-m", server.url(), "experiment", "list", "--limit", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ID  NAME       STATE      PROGRESS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1   quadratic  COMPLETED  100%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Showing 1 of 3 experiments"), std::string::npos) << r.out;
  EXPECT_EQ(server.requests().back().target, "/api/v1/experiments?limit=1&offset=0");

  auto j = Run({"experiment", "list", "--json", "-m", server.url()});  // global flags after the command
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out), nlohmann::json::parse(body));
}

// A master whose experiment 5 goes ACTIVE → ACTIVE → `final_state`.
FakeResponse ExperimentProgress(const FakeRequest& req, std::atomic<int>& polls,
                                const std::string& final_state) {
  if (req.target == "/api/v1/experiments/5") {
    int n = polls++;
    std::string state = n < 2 ? "ACTIVE" : final_state;
    return {200, R"({"id":5,"name":"q","state":")" + state + R"(","best_validation":null,"ended_at":null})"};
  }
  if (req.target.rfind("/api/v1/experiments/5/trials", 0) == 0) {
    std::string state = polls < 3 ? "ACTIVE" : final_state;
    return {200, R"({"trials":[{"id":11,"state":")" + state + R"(","total_batches":)" +
                     std::to_string(polls * 100) + R"(,"hparams":{"lr":0.1}}],"total":1})"};
  }
  if (req.target.rfind("/api/v1/trials/11/metrics", 0) == 0) {
    return {
        200,
        R"({"metrics":[{"batches":100,"metrics":{"loss":0.5}},{"batches":200,"metrics":{"loss":0.25}}]})"};
  }
  return {404, R"({"error":{"code":"not_found","message":"no route"}})"};
}

TEST_F(CliRunTest, WaitExitsZeroOnlyWhenCompleted) {
  std::atomic<int> polls{0};
  FakeHttpServer ok([&](const FakeRequest& r) { return ExperimentProgress(r, polls, "COMPLETED"); });
  auto r = Run({"-m", ok.url(), "experiment", "wait", "5"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Experiment 5 (q): ACTIVE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Experiment 5 (q): COMPLETED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Trial 11: COMPLETED"), std::string::npos) << r.out;

  std::atomic<int> polls2{0};
  FakeHttpServer failed([&](const FakeRequest& r) { return ExperimentProgress(r, polls2, "ERROR"); });
  auto f = Run({"-m", failed.url(), "experiment", "wait", "5"});
  EXPECT_EQ(f.code, 1);
  EXPECT_NE(f.err.find("experiment 5 ended ERROR"), std::string::npos) << f.err;
}

TEST_F(CliRunTest, WaitTimesOutWithExitOne) {
  FakeHttpServer server([](const FakeRequest& req) {
    if (req.target == "/api/v1/experiments/5")
      return FakeResponse{200, R"({"id":5,"name":"q","state":"ACTIVE"})"};
    return FakeResponse{200, R"({"trials":[],"total":0})"};
  });
  auto r = Run({"-m", server.url(), "experiment", "wait", "5", "--timeout", "0.2"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("still ACTIVE"), std::string::npos) << r.err;
}

TEST_F(CliRunTest, DescribeShowsTrialsAndFinalValidation) {
  FakeHttpServer server([](const FakeRequest& req) {
    if (req.target == "/api/v1/experiments/5")
      return FakeResponse{200,
                          R"({"id":5,"name":"quadratic","state":"COMPLETED","owner":"ann","progress":1,)"
                          R"("num_trials":1,"best_trial_id":11,"best_validation":0.01,"archived":false})"};
    if (req.target.rfind("/api/v1/experiments/5/trials", 0) == 0)
      return FakeResponse{
          200, R"({"trials":[{"id":11,"state":"COMPLETED","hparams":{"learning_rate":0.05,)"
               R"("batch_size":32},"total_batches":500,"restarts":0,"best_validation":0.01}],"total":1})"};
    if (req.target == "/api/v1/trials/11/metrics?kind=validation")
      return FakeResponse{200, R"({"metrics":[{"batches":200,"metrics":{"validation_loss":0.02}},)"
                               R"({"batches":500,"metrics":{"validation_loss":0.01}}]})"};
    return FakeResponse{404, R"({"error":{"message":"no route"}})"};
  });
  auto r = Run({"-m", server.url(), "experiment", "describe", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Experiment 5: quadratic"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ID  STATE      HPARAMS                           BATCHES  RESTARTS  BEST VALIDATION"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("11  COMPLETED  batch_size=32 learning_rate=0.05  500      0         0.01"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("11     500      validation_loss=0.01"), std::string::npos) << r.out;

  auto j = Run({"-m", server.url(), "--json", "experiment", "describe", "5"});
  ASSERT_EQ(j.code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["experiment"]["name"], "quadratic");
  EXPECT_EQ(doc["final_validation"][0]["trial_id"], 11);
  EXPECT_EQ(doc["final_validation"][0]["batches"], 500);
}

TEST_F(CliRunTest, LogsPageThroughAndFollowUntilTheTrialEnds) {
  std::atomic<int> calls{0};
  FakeHttpServer server([&](const FakeRequest& req) {
    ++calls;
    auto has = [&](const std::string& s) { return req.target.find(s) != std::string::npos; };
    std::string state = calls < 4 ? "ACTIVE" : "COMPLETED";
    if (has("offset=0&"))
      return FakeResponse{200,
                          R"({"logs":[{"id":1,"rank":0,"line":"hello"},{"id":2,"rank":1,"line":"world"}],)"
                          R"("offset":2,"trial_state":")" +
                              state + "\"}"};
    if (has("offset=2&") && calls >= 3)
      return FakeResponse{
          200, R"({"logs":[{"id":3,"rank":0,"line":"late"}],"offset":3,"trial_state":")" + state + "\"}"};
    return FakeResponse{200, R"({"logs":[],"offset":)" + std::string(has("offset=3&") ? "3" : "2") +
                                 R"(,"trial_state":")" + state + "\"}"};
  });
  auto once = Run({"-m", server.url(), "trial", "logs", "8"});
  ASSERT_EQ(once.code, 0) << once.err;
  EXPECT_EQ(once.out, "[rank 0] hello\n[rank 1] world\n");
  EXPECT_NE(server.requests()[0].target.find("/api/v1/trials/8/logs?offset=0&limit=1000&follow=false"),
            std::string::npos);

  calls = 0;
  auto followed = Run({"-m", server.url(), "trial", "logs", "8", "-f", "--rank", "0"});
  ASSERT_EQ(followed.code, 0) << followed.err;
  EXPECT_EQ(followed.out, "hello\nworld\nlate\n");
  EXPECT_NE(server.requests().back().target.find("follow=true&rank=0"), std::string::npos)
      << server.requests().back().target;
}

TEST_F(CliRunTest, ListsAgentsWithSlotUseContainerRuntimesAndWhenTheyEnrolled) {
  FakeHttpServer server([](const FakeRequest&) {
    return FakeResponse{
        200, R"({"agents":[{"id":"a1","pool":"default","state":"CONNECTED","address":"10.0.0.1",)"
             R"("slots":[{"id":0,"type":"cpu","allocation_id":"7.0"},{"id":1,"type":"cpu",)"
             R"("allocation_id":null}],"runs_as_owner":false,"last_seen_at":"now","enrolled_at":"then",)"
             R"("container_runtimes":[{"name":"podman","version":"4.3.1","rootless":false}],)"
             R"("revoked":false},)"
             R"({"id":"a2","pool":"default","state":"LOST","address":"10.0.0.2","slots":[],)"
             R"("runs_as_owner":true,"last_seen_at":"now","enrolled_at":"then","revoked":true}],"total":2})"};
  });
  auto r = Run({"-m", server.url(), "agent", "list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ID  POOL     STATE           MODE         CONTAINERS    ADDRESS   SLOTS  USED  "
                       "ENROLLED  LAST SEEN"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find(
          "a1  default  CONNECTED       single-user  podman 4.3.1  10.0.0.1  2 cpu  1     then      now"),
      std::string::npos)
      << r.out;
  // An agent without a runtime (or an older one that does not say) has none.
  EXPECT_NE(r.out.find("a2  default  LOST (removed)  as owner     none          10.0.0.2"), std::string::npos)
      << r.out;
}

TEST_F(CliRunTest, RemovesAgentsAllowsSlotsAndRotatesTheClusterToken) {
  FakeHttpServer server([](const FakeRequest& req) {
    if (req.target.find("/cluster-token/rotate") != std::string::npos)
      return FakeResponse{
          200, R"({"cluster_token_file":"/var/lib/ringmaster/cluster-token","cluster_token":"t0k"})"};
    if (req.target.find("/slots") != std::string::npos)
      return FakeResponse{200, R"({"id":"a1","enrolled_slots":4})"};
    return FakeResponse{200, R"({"id":"a1","removed":true})"};
  });
  auto removed = Run({"-m", server.url(), "agent", "remove", "a1"});
  ASSERT_EQ(removed.code, 0) << removed.err;
  EXPECT_EQ(server.requests().back().method, "DELETE");
  EXPECT_EQ(server.requests().back().target, "/api/v1/agents/a1");
  auto allowed = Run({"-m", server.url(), "agent", "allow-slots", "a1", "4"});
  ASSERT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_EQ(server.requests().back().body, R"({"slots":4})");
  auto rotated = Run({"-m", server.url(), "master", "rotate-cluster-token"});
  ASSERT_EQ(rotated.code, 0) << rotated.err;
  EXPECT_NE(rotated.out.find("/var/lib/ringmaster/cluster-token"), std::string::npos) << rotated.out;
  EXPECT_EQ(rotated.out.find("t0k"), std::string::npos) << rotated.out;
  auto printed = Run({"-m", server.url(), "master", "rotate-cluster-token", "--print"});
  EXPECT_EQ(printed.out, "t0k\n");
}

}  // namespace
}  // namespace ring::cli
