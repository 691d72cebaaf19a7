// Limits a client without credentials cannot break, each attack performed
// against a real master (and real agents where they matter) on loopback:
// made-up methods and paths do not grow /metrics; one client address cannot
// take every connection, while other addresses and agents still get in; a
// flood of sign-ins is answered 429 with a wait instead of queueing without
// end; guessing one user's password from many addresses is slowed; bodies
// are not read before their caller is let in; sign-in takes JSON only.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/raw_connection.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::limits {
namespace {

using namespace std::chrono_literals;

// One request over a new connection from `source` (empty: 127.0.0.1); the
// whole answer (the master closes: Connection: close).
std::string Ask(int port, const std::string& source, const std::string& method, const std::string& target,
                const std::string& headers = "", const std::string& body = "") {
  RawConnection c(port, source);
  if (!c.connected()) return "not connected";
  std::string request = method + " " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers;
  if (!body.empty()) request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  c.Send(request + "\r\n" + body);
  return c.ReadAll();
}

int StatusOf(const std::string& answer) {
  if (answer.rfind("HTTP/1.1 ", 0) != 0 || answer.size() < 12) return 0;
  return std::stoi(answer.substr(9, 3));
}

std::string SignInBody(const std::string& username, const std::string& password) {
  return nlohmann::json{{"username", username}, {"password", password}}.dump();
}

std::string SignInFrom(int port, const std::string& source, const std::string& username,
                       const std::string& password) {
  return Ask(port, source, "POST", "/api/v1/auth/login", "Content-Type: application/json\r\n",
             SignInBody(username, password));
}

// A kept-alive connection that asks one request after another.
class KeptAlive {
 public:
  KeptAlive(int port, const std::string& source) : conn_(port, source) {}
  // The body of the answer to GET `target`; empty when none came.
  std::string Get(const std::string& target, const std::string& headers) {
    if (!conn_.Send("GET " + target + " HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n")) return {};
    std::string head;
    char c = 0;
    while (head.find("\r\n\r\n") == std::string::npos && conn_.Read(&c, 1) == 1) head += c;
    std::smatch length;
    if (!std::regex_search(head, length, std::regex("Content-Length: ([0-9]+)", std::regex::icase)))
      return {};
    std::string body(std::stoul(length[1].str()), '\0');
    if (conn_.Read(body.data(), body.size()) != static_cast<ssize_t>(body.size())) return {};
    return body;
  }

 private:
  RawConnection conn_;
};

class LimitsTest : public ::testing::Test {
 protected:
  void Start(const std::string& yaml) {
    const std::string config = cluster_.WriteFile("master.yaml", yaml);
    cluster_.StartMaster({.extra_args = {"--config", config}});
    port_ = PortOf(cluster_.url());
  }

  void TearDown() override {
    if (HasFailure()) cluster_.DumpLogs();
  }

  TestCluster cluster_;
  int port_ = 0;
};

// Every made-up method and path used to become a /metrics series of its own,
// kept for good: a few thousand requests per GiB of master memory.
TEST_F(LimitsTest, MadeUpMethodsAndPathsDoNotAddMetricSeries) {
  Start("");
  auto series = [&] {
    const std::string text = Ask(port_, "", "GET", "/metrics");
    std::set<std::string> names;
    std::istringstream lines(text.substr(text.find("\r\n\r\n") + 4));
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("ringmaster_api_request", 0) == 0) names.insert(line.substr(0, line.rfind(' ')));
    return names;
  };
  const size_t before = series().size();
  for (int i = 0; i < 1500; ++i) {
    const std::string method = "MADEUP" + std::to_string(i);
    const std::string answer = Ask(port_, "", method, "/api/v1/experiments");
    ASSERT_EQ(StatusOf(answer), 405) << answer.substr(0, 300);
    ASSERT_EQ(StatusOf(Ask(port_, "", "GET", "/api/v1/no/such/path/" + std::to_string(i))), 404);
  }
  const auto after = series();
  // A few series (other and unmatched, GET /metrics itself), 20 lines each with
  // the histogram's; each made-up method or path would have added its own.
  EXPECT_LE(after.size(), before + 100) << "series grew from " << before << " to " << after.size();
  bool other = false, unmatched = false;
  for (const auto& s : after) {
    EXPECT_EQ(s.find("MADEUP"), std::string::npos) << s;
    EXPECT_EQ(s.find("/no/such/path"), std::string::npos) << s;
    other = other || s.find("method=\"other\"") != std::string::npos;
    unmatched = unmatched || s.find("route=\"unmatched\"") != std::string::npos;
  }
  EXPECT_TRUE(other);
  EXPECT_TRUE(unmatched);
}

// One address holding max_connections_per_address connections is refused
// more (503 naming the limit); another address still gets in, and so does an
// agent from the very same address. When all users' connections are taken,
// agents still get in.
TEST_F(LimitsTest, OneAddressCannotTakeEveryConnectionAndAgentsAlwaysGetIn) {
  Start("max_connections: 14\nmax_connections_per_address: 8\nrequest_timeout_ms: 30000\n");
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 8; ++i) held.push_back(std::make_unique<RawConnection>(port_));
  std::this_thread::sleep_for(300ms);
  for (int i = 0; i < 3; ++i) {
    const std::string answer = Ask(port_, "", "GET", "/api/v1/health");
    EXPECT_EQ(StatusOf(answer), 503) << answer.substr(0, 300);
    EXPECT_NE(answer.find("max_connections_per_address"), std::string::npos) << answer;
  }
  EXPECT_EQ(StatusOf(Ask(port_, "127.0.0.2", "GET", "/api/v1/health")), 200);

  const std::string admin = "Authorization: Bearer " + cluster_.admin_token() + "\r\n";
  // Admitted now, kept for asking about agents once every place is taken.
  KeptAlive observer(port_, "127.0.0.2");
  ASSERT_FALSE(observer.Get("/api/v1/health", "").empty());
  auto agent_connected = [&](const std::string& id) {
    return TestCluster::WaitFor(
        [&] {
          const auto body = nlohmann::json::parse(observer.Get("/api/v1/agents", admin), nullptr, false);
          if (!body.is_object()) return false;
          for (const auto& a : body.value("agents", nlohmann::json::array()))
            if (a.value("id", "") == id && a.value("state", "") == "connected") return true;
          return false;
        },
        20s);
  };
  auto start_agent = [&](const std::string& id) {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{BinDir() + "/ringagent", "--master", cluster_.url(), "--id", id,
                                 "--cpu-slots", "1", "--work-dir", cluster_.dir() + "/agent-" + id,
                                 "--state-dir", cluster_.agent_state_dir(id), "--token-file",
                                 cluster_.cluster_token_file(), "--single-user"},
        std::map<std::string, std::string>{}, cluster_.dir() + "/agent-" + id + ".log");
  };
  // The agent connects from 127.0.0.1, which is at its limit.
  auto first = start_agent("crowded-address");
  EXPECT_TRUE(agent_connected("crowded-address"))
      << ReadFileText(cluster_.dir() + "/agent-crowded-address.log");

  // Fill the rest of max_connections from a third address: users are refused, agents are not.
  for (int i = 0; i < 7; ++i) held.push_back(std::make_unique<RawConnection>(port_, "127.0.0.3"));
  std::this_thread::sleep_for(300ms);
  const std::string full = Ask(port_, "127.0.0.4", "GET", "/api/v1/health");
  EXPECT_EQ(StatusOf(full), 503) << full.substr(0, 300);
  EXPECT_NE(full.find("limit of 14 open connections"), std::string::npos) << full;
  auto second = start_agent("full-master");
  EXPECT_TRUE(agent_connected("full-master")) << ReadFileText(cluster_.dir() + "/agent-full-master.log");
  held.clear();
  first->Stop();
  second->Stop();
}

// A flood of sign-ins used to queue without bound behind the one hashing
// thread; now what does not fit in max_queued_sign_ins is told to wait.
TEST_F(LimitsTest, AFloodOfSignInsIsToldToWait) {
  Start("max_queued_sign_ins: 2\n");
  std::atomic<int> refused{0}, checked{0}, other{0};
  std::atomic<bool> retry_after{true};
  std::vector<std::thread> threads;
  for (int i = 0; i < 24; ++i)
    threads.emplace_back([&, i] {
      const std::string answer = SignInFrom(port_, "", "flood-" + std::to_string(i), "not the password");
      const int status = StatusOf(answer);
      if (status == 429) {
        ++refused;
        if (answer.find("Retry-After: ") == std::string::npos ||
            answer.find("max_queued_sign_ins") == std::string::npos)
          retry_after = false;
      } else if (status == 401) {
        ++checked;
      } else {
        ++other;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_GT(refused.load(), 0) << checked.load() << " checked";
  EXPECT_GT(checked.load(), 0);
  EXPECT_EQ(other.load(), 0);
  EXPECT_TRUE(retry_after.load()) << "a 429 without Retry-After or without naming max_queued_sign_ins";
  // Once the queue drained, the admin signs in.
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return StatusOf(SignInFrom(port_, "", "admin", cluster_.admin_password())) == 200; }, 10s));
}

// Guessing one user's password from many addresses, each below the
// per-address limit, is slowed per user, but not for the address the user
// signs in from.
TEST_F(LimitsTest, GuessingFromManyAddressesIsSlowedPerUserButNotForTheUsersOwnAddress) {
  Start("max_failed_logins_per_user: 6\n");
  // StartMaster signed the admin in from 127.0.0.1.
  for (int i = 0; i < 6; ++i) {
    const std::string answer =
        SignInFrom(port_, "127.0.1." + std::to_string(10 + i), "admin", "guess " + std::to_string(i));
    EXPECT_EQ(StatusOf(answer), 401) << answer.substr(0, 300);
  }
  const std::string held = SignInFrom(port_, "127.0.1.20", "admin", cluster_.admin_password());
  EXPECT_EQ(StatusOf(held), 429) << held.substr(0, 400);
  EXPECT_NE(held.find("several addresses"), std::string::npos) << held;
  EXPECT_NE(held.find("Retry-After: 1\r\n"), std::string::npos) << held;
  const std::string own = SignInFrom(port_, "127.0.0.1", "admin", cluster_.admin_password());
  EXPECT_EQ(StatusOf(own), 200) << own.substr(0, 400);
  // The wait is short and ends: a minute at most after the last failure.
  const std::string later = SignInFrom(port_, "127.0.1.21", "admin", cluster_.admin_password());
  EXPECT_EQ(StatusOf(later), 200) << "a success resets the count: " << later.substr(0, 400);
}

// The token is checked on the header alone: a client without one cannot make
// the master wait for (and buffer) a large body.
TEST_F(LimitsTest, BodiesAreNotReadBeforeTheCallerIsLetIn) {
  Start("");
  const std::string head = "Content-Type: application/json\r\nContent-Length: 7000000\r\n";
  struct Case {
    std::string target;
    std::string auth;
    int status;
  };
  const std::vector<Case> cases = {
      {"/api/v1/experiments", "", 401},
      {"/api/v1/experiments", "Authorization: Bearer not-a-token\r\n", 401},
      {"/api/v1/users", "", 401},
      {"/api/v1/allocations/1.1.0/metrics", "Authorization: Bearer not-a-token\r\n", 404},
  };
  for (const auto& c : cases) {
    RawConnection conn(port_);
    ASSERT_TRUE(conn.connected());
    const auto start = std::chrono::steady_clock::now();
    conn.Send("POST " + c.target + " HTTP/1.1\r\nHost: x\r\n" + head + c.auth + "\r\n");
    const std::string answer = conn.ReadAll();  // the master answers and closes at once
    EXPECT_EQ(StatusOf(answer), c.status) << c.target << ": " << answer.substr(0, 300);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s) << c.target;
  }
  // A signed-in caller's body is read as before.
  const std::string users =
      Ask(port_, "", "POST", "/api/v1/users",
          "Content-Type: application/json\r\nAuthorization: Bearer " + cluster_.admin_token() + "\r\n",
          R"({"username":"body-reader","password":"a long password"})");
  EXPECT_EQ(StatusOf(users), 201) << users.substr(0, 300);
}

// A sign-in form posted from another site (text/plain or a form type) is refused.
TEST_F(LimitsTest, SignInTakesOnlyJson) {
  Start("");
  const std::string body = SignInBody("admin", cluster_.admin_password());
  for (const std::string type : {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"}) {
    const std::string answer =
        Ask(port_, "", "POST", "/api/v1/auth/login", "Content-Type: " + type + "\r\n", body);
    EXPECT_EQ(StatusOf(answer), 415) << type << ": " << answer.substr(0, 300);
    EXPECT_NE(answer.find("application/json"), std::string::npos) << answer;
  }
  EXPECT_EQ(StatusOf(Ask(port_, "", "POST", "/api/v1/auth/login", "", body)), 415);
  EXPECT_EQ(StatusOf(Ask(port_, "", "POST", "/api/v1/auth/login",
                         "Content-Type: application/json; charset=utf-8\r\n", body)),
            200);
}

}  // namespace
}  // namespace ring::testing::limits
