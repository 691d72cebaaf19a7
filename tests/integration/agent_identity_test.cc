// Agents prove who they are, against a real master and real agents on
// 127.0.0.1: each attack a holder of the cluster token (or of a removed
// agent's credential) could try is performed with a raw WebSocket client
// (tests/support/fake_agent.h) and must fail without disturbing the real
// agent or its trial; refusals are counted in /metrics.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "common/archive.h"
#include "tests/support/fake_agent.h"
#include "tests/support/raw_connection.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::agent_identity {
namespace {

using namespace std::chrono_literals;

const char* kSleeper = R"(name: sleeper
entrypoint: echo started; sleep 120
hyperparameters:
  learning_rate: 0.1
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 100
max_restarts: 0
)";

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class AgentIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    port_ = PortOf(cluster_.url());
  }
  void TearDown() override {
    if (HasFailure()) cluster_.DumpLogs();
  }

  std::string ClusterToken() { return Trimmed(ReadText(cluster_.cluster_token_file())); }

  // The value of ringmaster_agent_refusals_total{reason="..."}.
  double Refusals(const std::string& reason) {
    auto res = cluster_.client().Get("/metrics");
    if (!res.ok()) return -1;
    std::smatch m;
    const std::regex line("ringmaster_agent_refusals_total\\{reason=\"" + reason + "\"\\} ([0-9.e+]+)");
    if (!std::regex_search(res->body, m, line)) return -1;
    return std::stod(m[1]);
  }

  nlohmann::json Agent(const std::string& id) {
    const auto agents = cluster_.GetJson("/api/v1/agents");
    for (const auto& a : agents.value("agents", nlohmann::json::array()))
      if (a.value("id", "") == id) return a;
    return nlohmann::json::object();
  }
  bool Connected(const std::string& id) { return Agent(id).value("state", "") == "connected"; }

  // Submits the sleeper and waits until its trial runs; returns its allocation.
  nlohmann::json StartSleeper() {
    auto model = cluster_.MakeModelDir("model", {{"train.sh", "#!/bin/sh\necho hi\n"}});
    auto tar = PackDirectory(model);
    EXPECT_TRUE(tar.ok());
    int status = 0;
    auto created = cluster_.PostJson(
        "/api/v1/experiments", {{"config", kSleeper}, {"model_definition", Base64Encode(*tar)}}, &status);
    EXPECT_EQ(status, 201) << created.dump();
    nlohmann::json allocation;
    EXPECT_TRUE(TestCluster::WaitFor(
        [&] {
          auto allocs = cluster_.GetJson("/api/v1/trials/1/allocations")["allocations"];
          if (!allocs.is_array() || allocs.empty() || allocs.back()["state"] != "RUNNING") return false;
          allocation = allocs.back();
          return true;
        },
        30s));
    return allocation;
  }

  // The allocation still runs, the same one, and the trial has no other.
  void ExpectStillRunning(const nlohmann::json& allocation) {
    auto allocs = cluster_.GetJson("/api/v1/trials/1/allocations")["allocations"];
    ASSERT_EQ(allocs.size(), 1u) << allocs.dump();
    EXPECT_EQ(allocs[0]["id"], allocation["id"]);
    EXPECT_EQ(allocs[0]["state"], "RUNNING") << allocs.dump();
    EXPECT_EQ(cluster_.GetJson("/api/v1/trials/1")["state"], "ACTIVE");
  }

  // Samples the real agent's connection every 200 ms for `how_long`.
  void ExpectStaysConnected(const std::string& id, std::chrono::milliseconds how_long) {
    const auto until = std::chrono::steady_clock::now() + how_long;
    int samples = 0;
    while (std::chrono::steady_clock::now() < until) {
      EXPECT_TRUE(Connected(id)) << "sample " << samples << ": " << Agent(id).dump();
      ++samples;
      std::this_thread::sleep_for(200ms);
    }
    EXPECT_GE(samples, 5);
  }

  // Enrols `id` with the cluster token; returns its credential.
  std::string EnrolFake(const std::string& id, int slots, const std::string& pool = "fakes") {
    auto answer = EnrolAgent(port_, ClusterToken(), {{"agent_id", id}, {"pool", pool}, {"slots", slots}});
    EXPECT_EQ(answer.status, 201) << answer.body.dump();
    return answer.body.value("credential", "");
  }

  proto::Hello HelloOf(const std::string& id, int slots, const std::string& pool = "fakes") {
    proto::Hello hello;
    hello.agent_id = id;
    hello.pool = pool;
    hello.address = "127.0.0.1";
    hello.version = "fake";
    for (int i = 0; i < slots; ++i) hello.slots.push_back({i, "cpu", ""});
    return hello;
  }

  TestCluster cluster_;
  int port_ = 0;
};

// A machine with the cluster token claims the id of a connected agent: with
// no credential, the cluster token, a made-up credential, or by enrolling the
// id again. Every try is a 401 (409 for the enrolment), and the real agent
// keeps its connection and its running trial.
TEST_F(AgentIdentityTest, AFakeAgentCannotTakeTheIdOfAConnectedOne) {
  cluster_.StartAgent("real", 1);
  const auto allocation = StartSleeper();
  ASSERT_FALSE(allocation.empty());
  const double before = Refusals("wrong_credential") + Refusals("no_credential");
  const std::string token = ClusterToken();

  const std::vector<std::map<std::string, std::string>> tries = {
      {{"X-Ring-Agent-Id", "real"}},
      {{"Authorization", "Bearer " + token}},
      FakeAgent::Credentials("real", token),
      FakeAgent::Credentials("real", std::string(64, 'a')),
  };
  for (const auto& headers : tries) {
    FakeAgent fake(port_, headers);
    EXPECT_FALSE(fake.upgraded());
    EXPECT_EQ(fake.status(), 401) << fake.body();
    EXPECT_FALSE(fake.Hello(HelloOf("real", 64, "default")));
  }
  auto again = EnrolAgent(port_, token, {{"agent_id", "real"}, {"pool", "default"}, {"slots", 64}});
  EXPECT_EQ(again.status, 409) << again.body.dump();

  ExpectStaysConnected("real", 3s);
  ExpectStillRunning(allocation);
  EXPECT_EQ(Agent("real")["slots"].size(), 1u);
  EXPECT_GE(Refusals("wrong_credential") + Refusals("no_credential"), before + 4);
  EXPECT_GE(Refusals("already_enrolled"), 1);
  // The real agent was never replaced: one session all along.
  EXPECT_EQ(ReadText(cluster_.agent(std::string("real")).log_path()).find("lost the master connection"),
            std::string::npos);
}

// A second agent, enrolled properly with the cluster token, reports an exit
// and log lines for the allocation placed on the real agent: both are
// refused and counted; the trial runs on and its logs hold no forged line.
TEST_F(AgentIdentityTest, ReportsOnAnotherAgentsAllocationAreRefused) {
  cluster_.StartAgent("real", 1);
  const auto allocation = StartSleeper();
  ASSERT_FALSE(allocation.empty());
  const std::string id = allocation["id"];

  FakeAgent fake(port_, FakeAgent::Credentials("liar", EnrolFake("liar", 1)));
  ASSERT_TRUE(fake.upgraded()) << fake.status() << " " << fake.body();
  ASSERT_TRUE(fake.Hello(HelloOf("liar", 1)));
  proto::StateChange exit{id, 0, proto::ProcessState::kExited, 0, std::nullopt, "forged"};
  proto::LogBatch logs{id, 0, 1000, {{0, "stdout", "forged line"}}};
  ASSERT_TRUE(fake.Send(logs));
  ASSERT_TRUE(fake.Send(exit));
  // A running rank the master never placed there, in a second hello.
  auto claim = HelloOf("liar", 1);
  claim.running = {{id, 0, 4242}};
  ASSERT_TRUE(fake.Send(claim));

  EXPECT_TRUE(TestCluster::WaitFor([&] { return Refusals("foreign_state") >= 1; }, 5s));
  EXPECT_TRUE(TestCluster::WaitFor([&] { return Refusals("foreign_logs") >= 1; }, 5s));
  EXPECT_TRUE(TestCluster::WaitFor([&] { return Refusals("foreign_running") >= 1; }, 5s));
  std::this_thread::sleep_for(1s);
  ExpectStillRunning(allocation);
  EXPECT_TRUE(Connected("real"));
  auto trial_logs = cluster_.GetJson("/api/v1/trials/1/logs");
  EXPECT_EQ(trial_logs.dump().find("forged"), std::string::npos) << trial_logs.dump();
  EXPECT_NE(trial_logs.dump().find("started"), std::string::npos) << trial_logs.dump();
}

// One allocation of two ranks over the real agent and an enrolled fake: the
// fake, holding rank 0, reports an exit and logs for rank 1, which runs on
// the real agent, and files a line of its own batch under rank 1. The exit
// and the batch are refused and counted; the trial runs on, and rank 1's
// logs hold only what the real agent sent.
TEST_F(AgentIdentityTest, ReportsOnARankPlacedOnAnotherAgentOfTheAllocationAreRefused) {
  cluster_.StartAgent("real", 1);
  FakeAgent fake(port_, FakeAgent::Credentials("liar", EnrolFake("liar", 1, "default")));
  ASSERT_TRUE(fake.upgraded()) << fake.status() << " " << fake.body();
  ASSERT_TRUE(fake.Hello(HelloOf("liar", 1, "default")));

  auto model = cluster_.MakeModelDir("model", {{"train.sh", "#!/bin/sh\necho hi\n"}});
  auto tar = PackDirectory(model);
  ASSERT_TRUE(tar.ok());
  std::string config = kSleeper;
  config += "resources:\n  slots_per_trial: 2\n";
  int status = 0;
  auto created = cluster_.PostJson("/api/v1/experiments",
                                   {{"config", config}, {"model_definition", Base64Encode(*tar)}}, &status);
  ASSERT_EQ(status, 201) << created.dump();
  // Ranks go by agent id among agents of one slot: "liar" holds rank 0.
  std::optional<proto::Start> start;
  for (int i = 0; i < 20 && !start; ++i) {
    auto frame = fake.ReadOne(10s);
    ASSERT_TRUE(frame) << "the master sent the fake agent no start";
    if (auto* s = std::get_if<proto::Start>(&*frame)) start = *s;
  }
  ASSERT_TRUE(start);
  ASSERT_EQ(start->rank, 0);
  ASSERT_EQ(start->world_size, 2);
  const std::string id = start->allocation_id;
  ASSERT_TRUE(fake.Send(proto::StateChange{id, 0, proto::ProcessState::kRunning, {}, {}, ""}));
  // The fake heartbeats as it waits: the master closes a silent connection.
  auto wait = [&](const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (done()) return true;
      EXPECT_TRUE(fake.Send(proto::Heartbeat{}));
      std::this_thread::sleep_for(300ms);
    }
    return done();
  };
  nlohmann::json allocation;
  ASSERT_TRUE(wait(
      [&] {
        auto allocs = cluster_.GetJson("/api/v1/trials/1/allocations")["allocations"];
        if (!allocs.is_array() || allocs.empty() || allocs.back()["state"] != "RUNNING") return false;
        allocation = allocs.back();
        return true;
      },
      30s));
  auto rank_one_started = [&] {
    auto logs = cluster_.GetJson("/api/v1/trials/1/logs?limit=1000");
    for (const auto& l : logs.value("logs", nlohmann::json::array()))
      if (l.value("rank", -1) == 1 && l.value("line", "") == "started") return true;
    return false;
  };
  ASSERT_TRUE(wait(rank_one_started, 30s)) << "the real agent's rank 1 did not print";

  const double state_before = Refusals("foreign_state");
  const double logs_before = Refusals("foreign_logs");
  ASSERT_TRUE(fake.Send(proto::StateChange{id, 1, proto::ProcessState::kExited, 3, std::nullopt, "forged"}));
  ASSERT_TRUE(fake.Send(proto::LogBatch{id, 1, 1000, {{0, "stdout", "forged batch", std::nullopt}}}));
  ASSERT_TRUE(fake.Send(proto::LogBatch{id, 0, 1000, {{0, "stdout", "forged prefix", 1}}}));
  EXPECT_TRUE(wait([&] { return Refusals("foreign_state") >= state_before + 1; }, 5s));
  EXPECT_TRUE(wait([&] { return Refusals("foreign_logs") >= logs_before + 1; }, 5s));
  wait([] { return false; }, 1s);

  ExpectStillRunning(allocation);
  EXPECT_TRUE(Connected("real"));
  auto logs = cluster_.GetJson("/api/v1/trials/1/logs?limit=1000");
  bool prefix_seen = false;
  for (const auto& l : logs.value("logs", nlohmann::json::array())) {
    const std::string line = l.value("line", "");
    EXPECT_NE(line, "forged batch") << "a batch for rank 1 from the agent of rank 0 was stored";
    if (line == "forged prefix") {
      prefix_seen = true;
      EXPECT_EQ(l.value("rank", -1), 0) << "the agent of rank 0 filed a line under rank 1";
    }
  }
  EXPECT_TRUE(prefix_seen) << logs.dump();
}

// An agent enrolled with 1 slot says hello with 64: it gets 1. An admin's
// `ring agent allow-slots` raises that from its next connection.
TEST_F(AgentIdentityTest, AnAgentGetsNoMoreSlotsThanItEnrolledWith) {
  const std::string credential = EnrolFake("greedy", 1, "default");
  {
    FakeAgent fake(port_, FakeAgent::Credentials("greedy", credential));
    ASSERT_TRUE(fake.Hello(HelloOf("greedy", 64, "default")));
    EXPECT_TRUE(TestCluster::WaitFor([&] { return Connected("greedy"); }, 5s));
    EXPECT_EQ(Agent("greedy")["slots"].size(), 1u) << Agent("greedy").dump();
    EXPECT_EQ(Agent("greedy")["enrolled_slots"], 1);
    EXPECT_GE(Refusals("slots_over_enrolled"), 1);
    // Nor may it move itself to another pool.
    FakeAgent mover(port_, FakeAgent::Credentials("greedy", credential));
    EXPECT_FALSE(mover.Hello(HelloOf("greedy", 1, "gpu-pool")));
    EXPECT_GE(Refusals("pool_mismatch"), 1);
  }
  auto allowed = cluster_.Ring({"agent", "allow-slots", "greedy", "4"});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  FakeAgent again(port_, FakeAgent::Credentials("greedy", credential));
  ASSERT_TRUE(again.Hello(HelloOf("greedy", 64, "default")));
  EXPECT_TRUE(TestCluster::WaitFor([&] { return Agent("greedy")["slots"].size() == 4u; }, 5s))
      << Agent("greedy").dump();
  // Users may not raise it.
  const std::string ada = cluster_.CreateUser("ada", "ada-password-1");
  auto as_ada = cluster_.NewClient();
  as_ada->SetBearerToken(ada);
  auto denied = as_ada->Request("POST", "/api/v1/agents/greedy/slots", R"({"slots": 64})");
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 403);
}

// `ring agent remove`: the real agent's connection is closed and its
// credential (which a trial or a thief might have copied) no longer
// connects; the id enrols again only with the cluster token.
TEST_F(AgentIdentityTest, ARemovedAgentsCredentialNoLongerConnects) {
  cluster_.StartAgent("doomed", 1);
  const std::string file = cluster_.agent_state_dir("doomed") + "/credential";
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(cluster_.agent_state_dir("doomed").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const auto stolen = nlohmann::json::parse(ReadText(file))["credential"].get<std::string>();
  EXPECT_NE(stolen, ClusterToken());

  auto listed = cluster_.Ring({"agent", "list"});
  EXPECT_NE(listed.out.find("ENROLLED"), std::string::npos) << listed.out;
  const std::string enrolled_at = Agent("doomed").value("enrolled_at", "");
  EXPECT_FALSE(enrolled_at.empty());
  EXPECT_NE(listed.out.find(enrolled_at.substr(0, 10)), std::string::npos) << listed.out;

  auto removed = cluster_.Ring({"agent", "remove", "doomed"});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_TRUE(TestCluster::WaitFor([&] { return !Connected("doomed"); }, 5s));
  EXPECT_EQ(Agent("doomed")["revoked"], true);
  // The real agent keeps trying with its credential, and stays out.
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        return ReadText(cluster_.agent("doomed").log_path()).find("refused this agent's credential") !=
               std::string::npos;
      },
      10s));
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(Connected("doomed"));
    std::this_thread::sleep_for(200ms);
  }
  FakeAgent thief(port_, FakeAgent::Credentials("doomed", stolen));
  EXPECT_EQ(thief.status(), 401) << thief.body();
  EXPECT_GE(Refusals("revoked"), 1);

  // Enrolling the id again needs the cluster token, and gives a new credential.
  cluster_.agent("doomed").Stop();
  EXPECT_EQ(EnrolAgent(port_, "", {{"agent_id", "doomed"}, {"slots", 1}}).status, 401);
  const std::string fresh = EnrolFake("doomed", 1, "default");
  EXPECT_NE(fresh, stolen);
  FakeAgent back(port_, FakeAgent::Credentials("doomed", fresh));
  EXPECT_TRUE(back.Hello(HelloOf("doomed", 1, "default")));
  FakeAgent old(port_, FakeAgent::Credentials("doomed", stolen));
  EXPECT_EQ(old.status(), 401);
}

// `ring master rotate-cluster-token`: a new token in the file (0600);
// the enrolled agent stays connected and reconnects after a restart with its
// credential; the old token enrols nothing, the new one does.
TEST_F(AgentIdentityTest, RotatingTheClusterTokenKeepsEnrolledAgents) {
  cluster_.StartAgent("steady", 1);
  const std::string old_token = ClusterToken();
  auto rotated = cluster_.Ring({"master", "rotate-cluster-token"});
  ASSERT_EQ(rotated.exit_code, 0) << rotated.err;
  EXPECT_NE(rotated.out.find(cluster_.cluster_token_file()), std::string::npos) << rotated.out;
  const std::string new_token = ClusterToken();
  EXPECT_NE(new_token, old_token);
  EXPECT_GE(new_token.size(), 32u);
  struct stat st {};
  ASSERT_EQ(stat(cluster_.cluster_token_file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  ExpectStaysConnected("steady", 2s);
  EXPECT_EQ(EnrolAgent(port_, old_token, {{"agent_id", "newcomer"}, {"slots", 1}}).status, 401);
  EXPECT_GE(Refusals("wrong_cluster_token"), 1);
  EXPECT_EQ(EnrolAgent(port_, new_token, {{"agent_id", "newcomer"}, {"slots", 1}}).status, 201);

  // A restart of the enrolled agent reconnects with its credential, even with
  // a token file holding the old token.
  cluster_.agent("steady").Stop();
  const std::string stale = cluster_.WriteFile("stale-token", old_token + "\n");
  ASSERT_EQ(chmod(stale.c_str(), 0600), 0);
  ChildProcess restarted({BinDir() + "/ringagent", "--master", cluster_.url(), "--id", "steady",
                          "--cpu-slots", "1", "--work-dir", cluster_.dir() + "/agent-steady", "--state-dir",
                          cluster_.agent_state_dir("steady"), "--token-file", stale, "--single-user"},
                         {}, cluster_.dir() + "/steady-again.log");
  EXPECT_TRUE(TestCluster::WaitFor([&] { return Connected("steady"); }, 15s))
      << ReadText(cluster_.dir() + "/steady-again.log");
  restarted.Stop();
}

// The agent takes the cluster token from a private file only.
TEST_F(AgentIdentityTest, TheAgentReadsItsTokenFromAPrivateFileOnly) {
  const std::string token = ClusterToken();
  const std::vector<std::string> base = {BinDir() + "/ringagent",
                                         "--master",
                                         cluster_.url(),
                                         "--id",
                                         "t1",
                                         "--cpu-slots",
                                         "1",
                                         "--work-dir",
                                         cluster_.dir() + "/t1",
                                         "--state-dir",
                                         cluster_.dir() + "/t1-state"};
  auto with = [&](std::vector<std::string> extra) {
    auto argv = base;
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  auto on_line = RunCommand(with({"--token", token}), {}, 20s);
  EXPECT_EQ(on_line.exit_code, 2);
  EXPECT_NE(on_line.err.find("--token-file"), std::string::npos) << on_line.err;

  auto from_env = RunCommand(with({}), {{"RING_AGENT_TOKEN", token}}, 20s);
  EXPECT_EQ(from_env.exit_code, 2);
  EXPECT_NE(from_env.err.find("--token-file"), std::string::npos) << from_env.err;

  const std::string shared = cluster_.WriteFile("shared-token", token + "\n");
  ASSERT_EQ(chmod(shared.c_str(), 0644), 0);
  auto readable = RunCommand(with({"--token-file", shared}), {}, 20s);
  EXPECT_EQ(readable.exit_code, 2);
  EXPECT_NE((readable.out + readable.err).find("chmod 600"), std::string::npos) << readable.err;

  auto no_token = RunCommand(with({}), {}, 20s);
  EXPECT_EQ(no_token.exit_code, 2);
  EXPECT_NE((no_token.out + no_token.err).find("not enrolled"), std::string::npos) << no_token.err;
  EXPECT_EQ(Agent("t1"), nlohmann::json::object());
}

}  // namespace
}  // namespace ring::testing::agent_identity
