// The rendezvous store of a real master, used with the tokens real agents hand
// their trial processes: ranks on different agents in rank order with their
// agent's id and address, reads that wait until another thread sets the key,
// and every refusal (wrong or another allocation's token, ended allocation,
// bad key, value too large).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "common/archive.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::rendezvous_integration {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Each rank writes its environment where the test reads it, then sleeps.
const char* kRunScript = R"(#!/bin/sh
out="$OUT_DIR/env-$RING_ALLOCATION_ID-$RANK"
env > "$out.tmp" && mv "$out.tmp" "$out.txt"
exec sleep 120
)";

std::string Config(const std::string& name, int slots, const std::string& out_dir) {
  return "name: " + name +
         "\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n"
         "  max_length:\n    batches: 10\nresources:\n  slots_per_trial: " +
         std::to_string(slots) + "\nmax_restarts: 0\nenvironment:\n  variables:\n    OUT_DIR: " + out_dir +
         "\n";
}

std::map<std::string, std::string> ReadEnv(const std::string& path) {
  std::map<std::string, std::string> env;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

class RendezvousIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A short request deadline: a waiting read must outlast it.
    TestCluster::MasterOptions master;
    master.extra_args = {"--config", cluster_.WriteFile("master.yaml", "request_timeout_ms: 1000\n")};
    cluster_.StartMaster(master);
    // Three one-slot agents, started out of id order.
    cluster_.StartAgent("node-c", 1);
    cluster_.StartAgent("node-b", 1);
    cluster_.StartAgent("node-a", 1);
    out_ = cluster_.dir() + "/out";
    fs::create_directories(out_);
    auto model = PackDirectory(cluster_.MakeModelDir("model", {{"run.sh", kRunScript}}));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_b64_ = Base64Encode(*model);
    // Two ranks on two agents, then a one-rank trial on the third.
    Create("pair", 2);
    env0_ = WaitEnv("1.0", 0);
    env1_ = WaitEnv("1.0", 1);
    Create("solo", 1);
    solo_ = WaitEnv("2.0", 0);
  }

  void Create(const std::string& name, int slots) {
    int status = 0;
    auto created =
        cluster_.PostJson("/api/v1/experiments",
                          {{"config", Config(name, slots, out_)}, {"model_definition", model_b64_}}, &status);
    ASSERT_EQ(status, 201) << created.dump();
  }

  std::map<std::string, std::string> WaitEnv(const std::string& alloc, int rank) {
    const std::string path = out_ + "/env-" + alloc + "-" + std::to_string(rank) + ".txt";
    EXPECT_TRUE(TestCluster::WaitFor([&] { return fs::exists(path); }, 30s)) << path << " never written";
    return ReadEnv(path);
  }

  // A client of its own (HttpClient is one per thread) with a token.
  std::unique_ptr<CheckedHttpClient> Client(const std::string& token) {
    auto client = cluster_.NewClient(30s);
    client->SetBearerToken(token);
    return client;
  }

  static std::string Target(const std::string& alloc, const std::string& query) {
    return "/api/v1/allocations/" + alloc + "/rendezvous?" + query;
  }

  static int Put(CheckedHttpClient& c, const std::string& alloc, const std::string& key,
                 const std::string& value, std::string* body = nullptr) {
    auto res =
        c.Request("PUT", Target(alloc, "key=" + PercentEncode(key)), value, "application/octet-stream");
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    if (!res.ok()) return 0;
    if (body) *body = res->body;
    return res->status;
  }

  static HttpResponse Get(CheckedHttpClient& c, const std::string& alloc, const std::string& key,
                          int timeout_ms = 0) {
    auto res =
        c.Get(Target(alloc, "key=" + PercentEncode(key) + "&timeout_ms=" + std::to_string(timeout_ms)));
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    return res.ok() ? *res : HttpResponse{};
  }

  static std::string Message(const std::string& body) {
    return nlohmann::json::parse(body, nullptr, false)["error"].value("message", "");
  }

  TestCluster cluster_;
  std::string out_;
  std::string model_b64_;
  std::map<std::string, std::string> env0_, env1_, solo_;
};

TEST_F(RendezvousIntegrationTest, RanksFollowAgentIdsAndKnowTheirAgent) {
  EXPECT_EQ(env0_["RANK"], "0");
  EXPECT_EQ(env0_["WORLD_SIZE"], "2");
  EXPECT_EQ(env0_["RING_AGENT_ID"], "node-a");
  EXPECT_EQ(env1_["RANK"], "1");
  EXPECT_EQ(env1_["RING_AGENT_ID"], "node-b");
  EXPECT_EQ(solo_["RING_AGENT_ID"], "node-c");
  // Every agent reaches the master over loopback, so that is its address,
  // and rank 0's agent address is MASTER_ADDR.
  EXPECT_EQ(env0_["RING_AGENT_ADDR"], "127.0.0.1");
  EXPECT_EQ(env1_["RING_AGENT_ADDR"], "127.0.0.1");
  EXPECT_EQ(env1_["MASTER_ADDR"], env0_["RING_AGENT_ADDR"]);
  EXPECT_EQ(env0_["MASTER_PORT"], env1_["MASTER_PORT"]);
  EXPECT_NE(env0_["MASTER_PORT"], solo_["MASTER_PORT"]);
  EXPECT_EQ(env0_["RING_ALLOCATION_TOKEN"], env1_["RING_ALLOCATION_TOKEN"]);
}

TEST_F(RendezvousIntegrationTest, TwoRanksMeetThroughWaitingReads) {
  const std::string token = env0_["RING_ALLOCATION_TOKEN"];
  // Each "rank" publishes its own key, then waits for the other's.
  auto rank = [&](int me, std::chrono::milliseconds delay) {
    auto c = Client(token);
    std::this_thread::sleep_for(delay);
    EXPECT_EQ(Put(*c, "1.0", "addr/" + std::to_string(me), "rank-" + std::to_string(me)), 204);
    const auto t0 = std::chrono::steady_clock::now();
    auto got = Get(*c, "1.0", "addr/" + std::to_string(1 - me), 20000);
    return std::make_tuple(got.status, got.body, std::chrono::steady_clock::now() - t0);
  };
  auto early = std::async(std::launch::async, rank, 0, 0ms);
  auto late = std::async(std::launch::async, rank, 1, 2500ms);  // past the request deadline
  auto [s0, b0, waited0] = early.get();
  auto [s1, b1, waited1] = late.get();
  EXPECT_EQ(s0, 200);
  EXPECT_EQ(b0, "rank-1");
  EXPECT_EQ(s1, 200);
  EXPECT_EQ(b1, "rank-0");
  // The early one waited for the late one's write, and was answered right after it.
  EXPECT_GE(waited0, 2200ms);
  EXPECT_LT(waited0, 5s);
  EXPECT_LT(waited1, 1s);

  // A binary value of the full 4 MiB round-trips; checking several keys does not wait.
  std::string big(4u << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
  auto c = Client(token);
  EXPECT_EQ(Put(*c, "1.0", "blob", big), 204);
  auto got = Get(*c, "1.0", "blob");
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.headers["content-type"], "application/octet-stream");
  EXPECT_TRUE(got.body == big);
  auto check = c->Get(Target("1.0", "keys=addr/0,addr/1,addr/2"));
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->status, 200);
  auto j = nlohmann::json::parse(check->body);
  EXPECT_EQ(j["set"], nlohmann::json({"addr/0", "addr/1"}));
  EXPECT_EQ(j["missing"], nlohmann::json({"addr/2"}));
  // Not set within the wait: 404 after it.
  const auto t0 = std::chrono::steady_clock::now();
  auto missing = Get(*c, "1.0", "addr/2", 500);
  EXPECT_EQ(missing.status, 404);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 450ms);
  EXPECT_EQ(Message(missing.body), "rendezvous key addr/2 is not set");
}

TEST_F(RendezvousIntegrationTest, RefusesWrongTokensBadKeysAndLargeValues) {
  const std::string token = env0_["RING_ALLOCATION_TOKEN"];
  auto wrong = Client("not-the-token");
  EXPECT_EQ(Put(*wrong, "1.0", "k", "v"), 401);
  EXPECT_EQ(Get(*wrong, "1.0", "k").status, 401);
  auto none = Client("");
  EXPECT_EQ(Put(*none, "1.0", "k", "v"), 401);
  // The other allocation's own token is good for its store only.
  auto other = Client(solo_["RING_ALLOCATION_TOKEN"]);
  EXPECT_EQ(Put(*other, "1.0", "k", "v"), 401);
  EXPECT_EQ(Put(*other, "2.0", "k", "solo"), 204);
  auto c = Client(token);
  EXPECT_EQ(Get(*c, "1.0", "k").status, 404);  // nothing leaked across
  EXPECT_EQ(Get(*c, "2.0", "k").status, 401);

  std::string body;
  EXPECT_EQ(Put(*c, "1.0", "white space", "v", &body), 400);
  EXPECT_NE(Message(body).find("\"white space\""), std::string::npos) << body;
  EXPECT_EQ(Put(*c, "1.0", std::string(257, 'k'), "v", &body), 400);
  EXPECT_EQ(Put(*c, "1.0", "big", std::string((4u << 20) + 1, 'x'), &body), 413);
  EXPECT_NE(Message(body).find("4194304 bytes per value"), std::string::npos) << body;
  EXPECT_EQ(Get(*c, "1.0", "big").status, 404);
  EXPECT_EQ(Put(*c, "9.0", "k", "v"), 404);  // no such allocation
}

TEST_F(RendezvousIntegrationTest, EndedAllocationGets409AndWaitersAreReleased) {
  const std::string token = env0_["RING_ALLOCATION_TOKEN"];
  auto waiter = std::async(std::launch::async, [&] {
    auto c = Client(token);
    const auto t0 = std::chrono::steady_clock::now();
    auto got = Get(*c, "1.0", "never", 30000);
    return std::make_pair(got.status, std::chrono::steady_clock::now() - t0);
  });
  std::this_thread::sleep_for(300ms);
  int status = 0;
  cluster_.PostJson("/api/v1/experiments/1/kill", {}, &status);
  ASSERT_EQ(status, 200);
  auto [waited_status, waited] = waiter.get();
  EXPECT_EQ(waited_status, 409);
  EXPECT_LT(waited, 20s);  // released when the allocation ended, not at its timeout
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return cluster_.GetJson("/api/v1/trials/1/allocations")["allocations"][0]["state"] == "TERMINATED";
      },
      20s));
  auto c = Client(token);
  std::string body;
  EXPECT_EQ(Put(*c, "1.0", "k", "v", &body), 409);
  EXPECT_NE(Message(body).find("ended"), std::string::npos) << body;
  EXPECT_EQ(Get(*c, "1.0", "k").status, 409);
  // The other allocation is untouched.
  auto other = Client(solo_["RING_ALLOCATION_TOKEN"]);
  EXPECT_EQ(Put(*other, "2.0", "k", "v"), 204);
}

}  // namespace
}  // namespace ring::testing::rendezvous_integration
