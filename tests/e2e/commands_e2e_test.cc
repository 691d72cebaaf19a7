// Commands on a real master and agent through the real `ring` CLI: exit
// codes handed to the shell, the environment and context folder a command
// gets, waiting with the job list's reason, kill, preemption by a
// higher-priority trial only when preemptible, a master kill -9 and
// restart that reattaches a running command, and another user refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/test_cluster.h"

namespace ring::testing::commands_e2e {
namespace {

using namespace std::chrono_literals;

nlohmann::json Command(TestCluster& cluster, int64_t id) {
  return cluster.GetJson("/api/v1/commands/" + std::to_string(id));
}

bool WaitForState(TestCluster& cluster, int64_t id, const std::string& state,
                  std::chrono::milliseconds timeout = 30s) {
  return TestCluster::WaitFor([&] { return Command(cluster, id)["state"] == state; }, timeout);
}

// `ring cmd run -d ...`: the new command's id.
int64_t Detached(TestCluster& cluster, std::vector<std::string> args) {
  std::vector<std::string> all = {"cmd", "run", "-d"};
  all.insert(all.end(), args.begin(), args.end());
  auto run = cluster.Ring(all);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  return std::atoll(run.out.c_str());
}

TEST(CommandsE2E, RunsToItsExitCodeWithTheTaskEnvironment) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  auto ok = cluster.Ring({"cmd", "run", "--", "sh", "-c",
                          "echo task=$RING_TASK_ID kind=$RING_TASK_KIND trial=${RING_TRIAL_ID-unset} "
                          "exp=${RING_EXPERIMENT_ID-unset} alloc=$RING_ALLOCATION_ID "
                          "cuda=${CUDA_VISIBLE_DEVICES+set}"});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("kind=COMMAND trial=unset exp=unset alloc=command-"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("cuda=set"), std::string::npos) << ok.out;
  // argv runs without a shell: the words reach the program as they are.
  auto words = cluster.Ring({"cmd", "run", "--", "printf", "[%s]\\n", "a b", "$HOME"});
  ASSERT_EQ(words.exit_code, 0) << words.err;
  EXPECT_NE(words.out.find("[a b]\n[$HOME]"), std::string::npos) << words.out;

  auto failed = cluster.Ring({"cmd", "run", "--", "sh", "-c", "echo about to fail; exit 7"});
  EXPECT_EQ(failed.exit_code, 7) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("about to fail"), std::string::npos);
  auto list = cluster.GetJson("/api/v1/commands")["commands"];
  ASSERT_EQ(list.size(), 3u) << list.dump();
  EXPECT_EQ(list[0]["exit_code"], 7);  // newest first
  EXPECT_EQ(list[0]["end_cause"], "FAILED");
  EXPECT_EQ(list[1]["end_cause"], "COMPLETED");
  EXPECT_EQ(list[1]["exit_code"], 0);
  auto listed = cluster.Ring({"cmd", "list"});
  EXPECT_EQ(listed.exit_code, 0);
  EXPECT_NE(listed.out.find("FAILED"), std::string::npos) << listed.out;
}

TEST(CommandsE2E, ShipsItsContextFolder) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  const std::string dir = cluster.MakeModelDir("ctx", {{"data.txt", "shipped with the command\n"}});
  const std::string config = cluster.WriteFile(
      "cmd.yaml",
      "description: reads its context\nentrypoint: [cat, data.txt]\nresources:\n  slots: 1\n"
      "environment:\n  environment_variables:\n    - GREETING=hi\n");
  auto run = cluster.Ring({"cmd", "run", "--context", dir, "--config-file", config});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("shipped with the command"), std::string::npos) << run.out;
  // The flags win over the file; its variables reach the command.
  auto env =
      cluster.Ring({"cmd", "run", "--config-file", config, "--", "sh", "-c", "echo greeting=$GREETING"});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_NE(env.out.find("greeting=hi"), std::string::npos) << env.out;
  // An unknown key is refused with its line, and nothing is created.
  const std::string bad = cluster.WriteFile("bad.yaml", "entrypoint: [true]\nresources:\n  slotz: 1\n");
  auto refused = cluster.Ring({"cmd", "run", "--config-file", bad});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("bad.yaml:3"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("slotz"), std::string::npos) << refused.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/commands")["commands"].size(), 2u);
}

TEST(CommandsE2E, WaitsWithAReasonThenRunsAndIsKilled) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  const int64_t first = Detached(cluster, {"--", "sleep", "60"});
  ASSERT_TRUE(WaitForState(cluster, first, "RUNNING"));
  const int64_t second = Detached(cluster, {"--", "sh", "-c", "echo second ran"});
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return Command(cluster, second)["pending_reason"].is_string(); }, 10s));
  EXPECT_EQ(Command(cluster, second)["state"], "PENDING");
  bool listed = false;
  const auto jobs_json = cluster.GetJson("/api/v1/jobs");
  for (const auto& j : jobs_json["jobs"])
    if (j["task_id"] == second) {
      listed = true;
      EXPECT_EQ(j["kind"], "COMMAND");
      EXPECT_EQ(j["owner"], "admin");
      EXPECT_NE(j["why_waiting"].get<std::string>().find("(it is one process)"), std::string::npos)
          << j.dump();
      EXPECT_TRUE(j["trial_id"].is_null());
    }
  EXPECT_TRUE(listed) << cluster.GetJson("/api/v1/jobs").dump();
  auto jobs = cluster.Ring({"job", "list"});
  EXPECT_NE(jobs.out.find("COMMAND"), std::string::npos) << jobs.out;

  auto kill = cluster.Ring({"cmd", "kill", std::to_string(first)});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  ASSERT_TRUE(WaitForState(cluster, first, "TERMINATED"));
  EXPECT_EQ(Command(cluster, first)["end_cause"], "USER_KILL");
  auto logs = cluster.Ring({"cmd", "logs", "-f", std::to_string(second)});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("second ran"), std::string::npos) << logs.out;
  auto killed_logs = cluster.Ring({"cmd", "logs", "-f", std::to_string(first)});
  EXPECT_NE(killed_logs.exit_code, 0);  // ended without an exit code of its own
}

constexpr const char* kUrgentTrial = R"(name: urgent
entrypoint: sh -c "sleep 1"
searcher:
  name: single
  metric: loss
  max_length:
    batches: 10
resources:
  priority: 1
max_restarts: 0
)";

TEST(CommandsE2E, OnlyAPreemptibleCommandMakesRoomForAHigherPriorityTrial) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  const std::string model = cluster.MakeModelDir("urgent", {{"README", "nothing\n"}});
  const std::string config = cluster.WriteFile("urgent.yaml", kUrgentTrial);

  const int64_t steady = Detached(cluster, {"--priority", "50", "--", "sleep", "120"});
  ASSERT_TRUE(WaitForState(cluster, steady, "RUNNING"));
  auto created = cluster.Ring({"experiment", "create", config, model});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  std::this_thread::sleep_for(4s);  // several scheduling passes
  EXPECT_EQ(Command(cluster, steady)["state"], "RUNNING") << "a non-preemptible command was stopped";
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1/trials")["trials"][0]["state"], "ACTIVE");
  ASSERT_EQ(cluster.Ring({"cmd", "kill", std::to_string(steady)}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return cluster.GetJson("/api/v1/experiments/1")["state"] != "ACTIVE"; }, 60s));

  const int64_t yielding = Detached(cluster, {"--priority", "50", "--preemptible", "--", "sleep", "120"});
  ASSERT_TRUE(WaitForState(cluster, yielding, "RUNNING"));
  auto again = cluster.Ring({"experiment", "create", config, model});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  ASSERT_TRUE(WaitForState(cluster, yielding, "TERMINATED", 30s)) << Command(cluster, yielding).dump();
  const auto ended = Command(cluster, yielding);
  EXPECT_EQ(ended["end_cause"], "PREEMPTED") << ended.dump();
  // Followed, it says why it ended.
  auto followed = cluster.Ring({"cmd", "logs", "-f", std::to_string(yielding)});
  EXPECT_NE(followed.exit_code, 0);
  EXPECT_NE(followed.err.find("ended: PREEMPTED"), std::string::npos) << followed.err;
  // Not restarted: it had one allocation.
  EXPECT_EQ(ended["allocation_id"], "command-" + std::to_string(yielding) + ".0");
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return cluster.GetJson("/api/v1/experiments/2")["state"] != "ACTIVE"; }, 60s));
  EXPECT_EQ(Command(cluster, yielding)["state"], "TERMINATED");
}

TEST(CommandsE2E, MasterKilledAndRestartedReattachesARunningCommand) {
  TestCluster cluster;
  cluster.StartMaster({.heartbeat_timeout_ms = 1500, .reconnect_window_ms = 1500});
  cluster.StartAgent("a1", 1);
  const std::string flag = cluster.dir() + "/restarted";
  const int64_t id = Detached(
      cluster,
      {"--", "sh", "-c", "echo before; while [ ! -e " + flag + " ]; do sleep 0.2; done; echo after; exit 3"});
  ASSERT_TRUE(WaitForState(cluster, id, "RUNNING"));
  cluster.KillMaster();
  std::this_thread::sleep_for(1s);
  cluster.StartMaster({.heartbeat_timeout_ms = 1500, .reconnect_window_ms = 1500});
  EXPECT_EQ(Command(cluster, id)["state"], "RUNNING");
  std::ofstream(flag) << "go\n";
  ASSERT_TRUE(WaitForState(cluster, id, "TERMINATED"));
  const auto ended = Command(cluster, id);
  EXPECT_EQ(ended["exit_code"], 3) << ended.dump();
  EXPECT_EQ(ended["end_cause"], "FAILED");
  EXPECT_EQ(ended["allocation_id"], "command-" + std::to_string(id) + ".0");  // the same allocation
  auto logs = cluster.Ring({"cmd", "logs", std::to_string(id)});
  EXPECT_NE(logs.out.find("before"), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("after"), std::string::npos) << logs.out;
}

TEST(CommandsE2E, AnotherUserIsRefused) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  const std::string ada = cluster.CreateUser("ada", "ada-password");
  const std::string bob = cluster.CreateUser("bob", "bob-password");
  auto run = cluster.RingAs("ada", ada, {"cmd", "run", "-d", "--", "sleep", "60"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const int64_t id = std::atoll(run.out.c_str());
  ASSERT_TRUE(WaitForState(cluster, id, "RUNNING"));
  auto as_bob = cluster.NewClient();
  as_bob->SetBearerToken(bob);
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/api/v1/commands/" + std::to_string(id)},
           {"GET", "/api/v1/commands/" + std::to_string(id) + "/logs"},
           {"POST", "/api/v1/commands/" + std::to_string(id) + "/kill"}}) {
    auto res = as_bob->Request(method, path, "");
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(res->status, 403) << method << " " << path << ": " << res->body;
  }
  auto bobs = cluster.RingAs("bob", bob, {"cmd", "kill", std::to_string(id)});
  EXPECT_NE(bobs.exit_code, 0);
  EXPECT_NE(bobs.err.find("belongs to ada"), std::string::npos) << bobs.err;
  EXPECT_EQ(cluster.RingAs("bob", bob, {"cmd", "list"}).out.find("sleep"), std::string::npos);
  EXPECT_EQ(Command(cluster, id)["state"], "RUNNING");
  EXPECT_EQ(cluster.RingAs("ada", ada, {"cmd", "kill", std::to_string(id)}).exit_code, 0);
  ASSERT_TRUE(WaitForState(cluster, id, "TERMINATED"));
}

}  // namespace
}  // namespace ring::testing::commands_e2e
