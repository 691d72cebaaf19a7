// A real master under bad requests on 127.0.0.1: every limit answers with a
// status that names it (431 for headers, 413 for a body, 503 past the
// connection limit), and for a bounded time a storm of random bytes,
// truncated requests, huge headers and slowloris connections runs while a
// good client keeps creating experiments and reading them. Every good
// request succeeds, the master is still running at the end, and its database
// passes PRAGMA integrity_check.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/archive.h"
#include "tests/support/raw_connection.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::bad_requests {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class BadRequestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string config = cluster_.WriteFile("master.yaml",
                                                  "max_connections: 48\n"
                                                  "request_timeout_ms: 1500\n");
    cluster_.StartMaster({.extra_args = {"--config", config}});
    port_ = PortOf(cluster_.url());
    auto tar = PackDirectory(cluster_.MakeModelDir("model", {{"run.sh", "#!/bin/sh\necho hi\n"}}));
    ASSERT_TRUE(tar.ok()) << tar.status().ToString();
    model_b64_ = Base64Encode(*tar);
  }

  // Creates a small experiment and reads it back: true when both succeeded.
  bool GoodRoundTrip(CheckedHttpClient& client, int n) {
    nlohmann::json body = {
        {"config", "name: good-" + std::to_string(n) +
                       "\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n"
                       "  max_length:\n    batches: 1\n"},
        {"model_definition", model_b64_},
        {"activate", false}};
    auto created = client.Post("/api/v1/experiments", body.dump());
    if (!created.ok() || created->status != 201) return false;
    const auto id = nlohmann::json::parse(created->body, nullptr, false).value("id", int64_t{0});
    auto read = client.Get("/api/v1/experiments/" + std::to_string(id));
    return read.ok() && read->status == 200;
  }

  TestCluster cluster_;
  int port_ = 0;
  std::string model_b64_;
};

TEST_F(BadRequestsTest, EachLimitIsAnsweredWithAStatusThatNamesIt) {
  {
    RawConnection c(port_);
    ASSERT_TRUE(c.connected());
    c.Send("GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(100 * 1024, 'a') + "\r\n\r\n");
    const std::string answer = c.ReadAll();
    EXPECT_EQ(answer.rfind("HTTP/1.1 431", 0), 0u) << answer.substr(0, 200);
    EXPECT_NE(answer.find("request header fields are over the limit of 65536 bytes"), std::string::npos)
        << answer;
  }
  {
    RawConnection c(port_);
    // Signed in: a caller without a token is refused (401) before any body limit.
    c.Send("POST /api/v1/experiments/1/pause HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
           cluster_.admin_token() + "\r\nContent-Length: 999999999\r\n\r\n");
    const std::string answer = c.ReadAll();
    EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer.substr(0, 200);
    EXPECT_NE(answer.find("request body is over the limit of"), std::string::npos) << answer;
  }
  // 48 idle connections fill the limit: the next one is told so.
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 48; ++i) idle.push_back(std::make_unique<RawConnection>(port_));
  std::this_thread::sleep_for(200ms);
  {
    RawConnection c(port_);
    c.Send("GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n");
    const std::string answer = c.ReadAll();
    EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer.substr(0, 200);
    EXPECT_NE(answer.find("limit of 48 open connections"), std::string::npos) << answer;
  }
  idle.clear();
  // Freed connections are counted back: good requests are served again.
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        int status = 0;
        cluster_.GetJson("/api/v1/health", &status);
        return status == 200;
      },
      5s));
}

// The cluster token the master made (0600) at its first start only enrols
// agents: the agents' WebSocket needs an enrolled id and its credential, so
// an upgrade without them, or with the cluster token in their place, gets a
// 401, and a real agent with another token never joins.
TEST_F(BadRequestsTest, AgentsWithoutTheClusterTokenAreRefused) {
  struct stat st {};
  ASSERT_EQ(stat(cluster_.cluster_token_file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string token = ReadFileText(cluster_.cluster_token_file());
  while (!token.empty() && token.back() == '\n') token.pop_back();
  ASSERT_GE(token.size(), 32u);

  const std::string upgrade =
      "GET /api/v1/agents/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
  for (const std::string& headers : {std::string(), std::string("Authorization: Bearer not-the-token\r\n"),
                                     "Authorization: Bearer " + token + "\r\n",
                                     "X-Ring-Agent-Id: a1\r\nAuthorization: Bearer " + token + "\r\n"}) {
    RawConnection c(port_);
    c.Send(upgrade + headers + "\r\n");
    const std::string answer = c.ReadAll();
    EXPECT_EQ(answer.rfind("HTTP/1.1 401", 0), 0u) << headers << answer.substr(0, 200);
  }

  // A real agent with a wrong token: refused, it says why, and never joins.
  const std::string wrong = cluster_.WriteFile("wrong-token", "0123456789abcdef0123456789abcdef\n");
  ASSERT_EQ(chmod(wrong.c_str(), 0600), 0);
  ChildProcess agent({BinDir() + "/ringagent", "--master", cluster_.url(), "--id", "intruder", "--cpu-slots",
                      "1", "--work-dir", cluster_.dir() + "/intruder", "--state-dir",
                      cluster_.dir() + "/intruder-state", "--token-file", wrong, "--single-user"},
                     {}, cluster_.dir() + "/intruder.log");
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return ReadFileText(cluster_.dir() + "/intruder.log").find("HTTP 401") != std::string::npos; },
      10s))
      << ReadFileText(cluster_.dir() + "/intruder.log");
  EXPECT_TRUE(cluster_.GetJson("/api/v1/agents")["agents"].empty());
}

TEST_F(BadRequestsTest, GoodRequestsAreServedThroughAStormOfBadOnesAndTheDatabaseStaysIntact) {
  std::atomic<bool> stop{false};
  std::atomic<int> bad_sent{0};
  auto storm = [&](int kind, unsigned seed) {
    std::mt19937 rng(seed);
    while (!stop) {
      RawConnection c(port_);
      if (!c.connected()) continue;
      std::string data;
      switch (kind) {
        case 0: {  // random bytes
          data.resize(1 + rng() % 4096);
          for (auto& ch : data) ch = static_cast<char>(rng());
          break;
        }
        case 1: {  // a request cut short: in the header or in the body
          const std::string full =
              "POST /api/v1/experiments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              "Content-Length: 400\r\n\r\n{\"config\": \"name: cut\"";
          data = full.substr(0, 1 + rng() % full.size());
          break;
        }
        case 2:  // headers over the limit
          data = "GET /api/v1/experiments HTTP/1.1\r\nHost: x\r\n";
          for (int i = 0; i < 40; ++i)
            data += "X-" + std::to_string(i) + ": " + std::string(2000, 'h') + "\r\n";
          data += "\r\n";
          break;
        default: {  // slowloris: a byte of a header every 200 ms until the master gives up
          const std::string slow = "GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ";
          for (size_t i = 0; i < slow.size() && !stop; ++i) {
            if (!c.Send(slow.substr(i, 1))) break;
            std::this_thread::sleep_for(200ms);
          }
          ++bad_sent;
          continue;
        }
      }
      c.Send(data);
      if (kind != 1 || rng() % 2) c.CloseWrite();  // a cut request sometimes just hangs instead
      c.ReadAll();
      ++bad_sent;
    }
  };
  std::vector<std::thread> threads;
  for (int kind = 0; kind < 4; ++kind)
    for (int k = 0; k < (kind == 3 ? 8 : 2); ++k) threads.emplace_back(storm, kind, 1000u * kind + k);

  auto client = cluster_.NewClient(10s);
  client->SetBearerToken(cluster_.admin_token());
  int good = 0, failed = 0;
  const auto until = Clock::now() + 8s;
  while (Clock::now() < until) {
    const auto t0 = Clock::now();
    if (GoodRoundTrip(*client, good + failed))
      ++good;
    else
      ++failed;
    EXPECT_LT(Clock::now() - t0, 5s) << "a good request waited behind bad ones";
    std::this_thread::sleep_for(20ms);
  }
  stop = true;
  for (auto& t : threads) t.join();

  EXPECT_EQ(failed, 0) << good << " good round trips succeeded";
  EXPECT_GT(good, 20);
  EXPECT_GT(bad_sent.load(), 100);
  ASSERT_TRUE(cluster_.master()->running()) << "the master died";
  auto listed = cluster_.GetJson("/api/v1/experiments?limit=1000");
  EXPECT_EQ(listed.value("total", 0), good);

  cluster_.StopMaster();
  sqlite3* db = nullptr;
  ASSERT_EQ(
      sqlite3_open_v2((cluster_.dir() + "/master/ringmaster.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
      SQLITE_OK);
  std::string result;
  sqlite3_exec(
      db, "PRAGMA integrity_check",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) += values[0] ? values[0] : "";
        return 0;
      },
      &result, nullptr);
  sqlite3_close(db);
  EXPECT_EQ(result, "ok");
}

}  // namespace
}  // namespace ring::testing::bad_requests
