// Silence after hello, against a real master on 127.0.0.1: the master
// closes the connection of an agent that stops sending frames once its
// heartbeat timeout passes (the session itself no longer times reads after
// the hello), while an agent that heartbeats stays connected and its
// last_seen_at moves on. Raw WebSocket clients (tests/support/fake_agent.h).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "tests/support/fake_agent.h"
#include "tests/support/raw_connection.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::agent_silence {
namespace {

using namespace std::chrono_literals;

std::string ClusterToken(const TestCluster& cluster) {
  std::ifstream in(cluster.cluster_token_file());
  std::string token;
  in >> token;
  return token;
}

proto::Hello HelloOf(const std::string& id) {
  proto::Hello hello;
  hello.agent_id = id;
  hello.pool = "fakes";
  hello.address = "127.0.0.1";
  hello.version = "fake";
  hello.slots.push_back({0, "cpu", ""});
  return hello;
}

nlohmann::json AgentOf(TestCluster& cluster, const std::string& id) {
  for (const auto& a : cluster.GetJson("/api/v1/agents").value("agents", nlohmann::json::array()))
    if (a.value("id", "") == id) return a;
  return nlohmann::json::object();
}

TEST(AgentSilenceTest, ASilentAgentIsClosedAfterItsHeartbeatTimeoutAndAHeartbeatingOneStays) {
  TestCluster cluster;
  TestCluster::MasterOptions options;
  options.heartbeat_timeout_ms = 2000;
  cluster.StartMaster(options);
  const int port = PortOf(cluster.url());
  std::map<std::string, std::unique_ptr<FakeAgent>> agents;
  for (const std::string id : {"quiet", "beating"}) {
    auto enrolled =
        EnrolAgent(port, ClusterToken(cluster), {{"agent_id", id}, {"pool", "fakes"}, {"slots", 1}});
    ASSERT_EQ(enrolled.status, 201) << enrolled.body.dump();
    agents[id] =
        std::make_unique<FakeAgent>(port, FakeAgent::Credentials(id, enrolled.body.value("credential", "")));
    ASSERT_TRUE(agents[id]->upgraded()) << agents[id]->status() << " " << agents[id]->body();
    ASSERT_TRUE(agents[id]->Hello(HelloOf(id))) << id;
  }
  const std::string first_seen = AgentOf(cluster, "beating").value("last_seen_at", "");
  EXPECT_FALSE(first_seen.empty());

  // The heartbeating agent sends one every 300 ms on a thread of its own
  // while this thread waits for the master to close the quiet one.
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  std::thread beats([&] {
    while (!stop) {
      if (agents["beating"]->Send(proto::Heartbeat{})) ++sent;
      std::this_thread::sleep_for(300ms);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  auto frame = agents["quiet"]->ReadOne(8s);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(frame.has_value());
  EXPECT_TRUE(agents["quiet"]->closed()) << "the quiet agent's connection was not closed within 8 s";
  EXPECT_GE(waited, 1500ms);  // not before its timeout (2 s from its hello)
  EXPECT_LT(waited, 6s);
  EXPECT_TRUE(
      TestCluster::WaitFor([&] { return AgentOf(cluster, "quiet").value("state", "") != "connected"; }, 5s))
      << AgentOf(cluster, "quiet").dump();

  std::this_thread::sleep_for(1s);  // past the heartbeat timeout again
  stop = true;
  beats.join();
  EXPECT_GT(sent.load(), 5);
  const auto beating = AgentOf(cluster, "beating");
  EXPECT_EQ(beating.value("state", ""), "connected") << beating.dump();
  // RFC 3339 with milliseconds, and later than at the hello.
  const std::string last_seen = beating.value("last_seen_at", "");
  EXPECT_EQ(last_seen.size(), std::string("2026-01-01T00:00:00.000Z").size()) << last_seen;
  EXPECT_GT(last_seen, first_seen);
}

}  // namespace
}  // namespace ring::testing::agent_silence
