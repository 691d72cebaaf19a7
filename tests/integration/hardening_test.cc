// Smaller holes, each closed and each tried against a real master (and a
// real agent and trials where they matter): answers carry the headers that
// keep a browser from being turned against its user; the master's database
// and data folder are private whatever the umask; a trial's log may not grow
// faster than its byte rate and is read back in bounded pages, through the
// API and the CLI; an allocation token a trial prints never reaches a log
// other users read; an owner cannot raise what an admin set on their
// experiment; and a pool kept for named users refuses everyone else.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/archive.h"
#include "tests/support/raw_connection.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::hardening {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string SingleConfig(const std::string& name, const std::string& extra = "") {
  return "name: " + name +
         "\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n  max_length:\n    batches: 1\n"
         "max_restarts: 0\n" +
         extra;
}

class HardeningTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (HasFailure()) cluster_.DumpLogs();
  }

  // Submits an experiment whose run.sh is `script`, as the holder of `token`.
  HttpResponse Submit(const std::string& token, const std::string& config, const std::string& script,
                      bool activate = true) {
    auto model =
        PackDirectory(cluster_.MakeModelDir("model" + std::to_string(++models_), {{"run.sh", script}}));
    EXPECT_TRUE(model.ok());
    auto client = cluster_.NewClient();
    client->SetBearerToken(token);
    nlohmann::json body = {
        {"config", config}, {"model_definition", Base64Encode(*model)}, {"activate", activate}};
    auto res = client->Post("/api/v1/experiments", body.dump());
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    return res.ok() ? *res : HttpResponse{};
  }

  static int64_t IdOf(const HttpResponse& res) {
    return nlohmann::json::parse(res.body, nullptr, false).value("id", int64_t{0});
  }

  // The experiment's first trial once it ended.
  int64_t EndedTrialOf(int64_t experiment) {
    int64_t trial = 0;
    EXPECT_TRUE(TestCluster::WaitFor(
        [&] {
          auto trials = cluster_.GetJson("/api/v1/experiments/" + std::to_string(experiment) + "/trials");
          if (!trials.contains("trials") || trials["trials"].empty()) return false;
          const std::string state = trials["trials"][0].value("state", "");
          trial = trials["trials"][0].value("id", int64_t{0});
          return state == "COMPLETED" || state == "ERROR" || state == "CANCELED";
        },
        60s))
        << "experiment " << experiment << "'s trial did not end";
    return trial;
  }

  TestCluster cluster_;
  int models_ = 0;
};

std::map<std::string, std::string> HeadersOf(const std::string& answer) {
  std::map<std::string, std::string> out;
  std::istringstream lines(answer.substr(0, answer.find("\r\n\r\n")));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out[name] = line.substr(colon + 2);
  }
  return out;
}

// Framing the UI on another site (clickjacking), running injected inline
// script, sniffing an answer into HTML, leaking URLs in Referer: each is
// refused by a header on every answer.
TEST_F(HardeningTest, EveryAnswerCarriesTheBrowserSecurityHeaders) {
  const fs::path webui = fs::path(cluster_.dir()) / "webui";
  fs::create_directories(webui / "assets");
  std::ofstream(webui / "index.html") << "<!doctype html><title>Ringmaster</title>";
  std::ofstream(webui / "assets" / "index-abc123.js") << "export {}";
  cluster_.StartMaster({.extra_args = {"--webui-dir", webui.string()}});
  const int port = PortOf(cluster_.url());
  auto ask = [&](const std::string& target, const std::string& extra = "") {
    RawConnection c(port);
    c.Send("GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + extra + "\r\n");
    return c.ReadAll();
  };
  const std::string token = "Authorization: Bearer " + cluster_.admin_token() + "\r\n";
  struct Case {
    std::string target, extra;
    int status;
    bool page;
  };
  for (const Case& c : std::vector<Case>{{"/", "", 200, true},
                                         {"/experiments/4", "", 200, true},
                                         {"/assets/index-abc123.js", "", 200, true},
                                         {"/api/v1/health", "", 200, false},
                                         {"/api/v1/experiments", token, 200, false},
                                         {"/api/v1/experiments", "", 401, false},
                                         {"/api/v1/nothing", "", 404, false},
                                         {"/metrics", "", 200, false}}) {
    const std::string answer = ask(c.target, c.extra);
    ASSERT_EQ(answer.substr(0, 12), "HTTP/1.1 " + std::to_string(c.status)) << c.target;
    auto h = HeadersOf(answer);
    EXPECT_EQ(h["x-frame-options"], "DENY") << c.target;
    EXPECT_EQ(h["x-content-type-options"], "nosniff") << c.target;
    EXPECT_EQ(h["referrer-policy"], "no-referrer") << c.target;
    const std::string csp = h["content-security-policy"];
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << c.target << ": " << csp;
    if (c.page) {
      EXPECT_NE(csp.find("script-src 'self';"), std::string::npos) << csp;
      EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos) << csp;
      // Inline <style> elements only (the terminal's, xterm.js): never
      // inline script, never style attributes in markup.
      std::string rest = csp;
      const std::string elements = "style-src-elem 'self' 'unsafe-inline';";
      if (auto at = rest.find(elements); at != std::string::npos) rest.erase(at, elements.size());
      EXPECT_EQ(rest.find("unsafe-inline"), std::string::npos) << csp;
    } else {
      EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << c.target << ": " << csp;
    }
  }
}

// With umask 000 the database, its WAL and shared-memory files and the data
// folder used to be readable (and writable) by everyone on the machine.
TEST_F(HardeningTest, TheDatabaseAndDataFolderArePrivateWhateverTheUmask) {
  const mode_t old = umask(0);
  cluster_.StartMaster();
  umask(old);
  // A write, so the WAL and its index exist.
  EXPECT_EQ(Submit(cluster_.admin_token(), SingleConfig("umask"), "true\n", false).status, 201);
  const std::string dir = cluster_.dir() + "/master";
  auto mode = [](const std::string& path) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return 07777u;
    return static_cast<unsigned>(st.st_mode & 07777);
  };
  EXPECT_EQ(mode(dir), 0700u) << dir;
  for (const std::string file : {"ringmaster.db", "ringmaster.db-wal", "ringmaster.db-shm", "cluster-token"})
    EXPECT_EQ(mode(dir + "/" + file), 0600u) << file;
}

// A trial printing as fast as it can used to be limited in lines only, so
// long lines filled the database at any rate; and a read of its logs came
// back in one answer of any size.
TEST_F(HardeningTest, LogsAreLimitedInBytesAndReadBackInBoundedPages) {
  const std::string config = cluster_.WriteFile("master.yaml",
                                                "log_lines_per_second: 100000\nlog_burst_lines: 100000\n"
                                                "log_bytes_per_second: 1024\nlog_burst_bytes: 16384\n"
                                                "max_log_page_bytes: 4096\n");
  cluster_.StartMaster({.extra_args = {"--config", config}});
  cluster_.StartAgent("agent-0", 1);
  const std::string line(100, 'x');
  const auto started = std::chrono::steady_clock::now();
  auto res = Submit(cluster_.admin_token(), SingleConfig("chatty"),
                    "for i in $(seq 3000); do echo \"$i " + line + "\"; done\nsleep 1\n");
  ASSERT_EQ(res.status, 201) << res.body;
  const int64_t trial = EndedTrialOf(IdOf(res));
  std::this_thread::sleep_for(1500ms);  // the last batches
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  // Page through: every answer holds at most max_log_page_bytes of text.
  std::vector<std::string> lines;
  int64_t offset = 0;
  int pages = 0;
  for (bool more = true; more && pages < 1000; ++pages) {
    auto page = cluster_.GetJson("/api/v1/trials/" + std::to_string(trial) +
                                 "/logs?limit=50000&offset=" + std::to_string(offset));
    ASSERT_TRUE(page.contains("more")) << page.dump().substr(0, 300);
    size_t bytes = 0;
    for (const auto& l : page["logs"]) {
      bytes += l["line"].get<std::string>().size();
      lines.push_back(l["line"].get<std::string>());
    }
    if (page["logs"].size() > 1) {
      EXPECT_LE(bytes, 4096u) << "page " << pages;
    }
    more = page["more"].get<bool>();
    offset = page["offset"].get<int64_t>();
  }
  EXPECT_GT(pages, 3);
  size_t stored = 0;
  bool noticed = false;
  for (const auto& l : lines) {
    stored += l.size() + 1;
    noticed = noticed || l.find("log_bytes_per_second") != std::string::npos;
  }
  EXPECT_TRUE(noticed) << "no notice names the byte limit";
  // The burst, the rate for as long as the trial ran, and the notices.
  EXPECT_LT(stored, 16384 + 1024 * (seconds + 2) + 200 * (seconds + 2))
      << lines.size() << " lines in " << seconds << " s";
  EXPECT_LT(lines.size(), 1000u);

  // The CLI follows the pages to the end.
  auto cli = cluster_.Ring({"trial", "logs", std::to_string(trial)});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  size_t printed = 0;
  for (char c : cli.out) printed += c == '\n';
  EXPECT_EQ(printed, lines.size());
  EXPECT_NE(cli.out.find(lines.back()), std::string::npos);
}

// Other users read every trial's logs: a trial that prints its environment
// (or its token) must not hand them the allocation token that acts as it.
TEST_F(HardeningTest, AllocationTokensNeverReachALogOtherUsersRead) {
  cluster_.StartMaster();
  cluster_.StartAgent("agent-0", 1);
  const std::string out = cluster_.dir() + "/token-out";
  fs::create_directories(out);
  auto res =
      Submit(cluster_.admin_token(), SingleConfig("printer"),
             "echo \"$RING_ALLOCATION_TOKEN\" > " + out +
                 "/token\necho \"token=$RING_ALLOCATION_TOKEN\"\nenv\necho \"$RING_ALLOCATION_TOKEN\" >&2\n"
                 "sleep 1\n");
  ASSERT_EQ(res.status, 201) << res.body;
  const int64_t trial = EndedTrialOf(IdOf(res));
  std::string token = ReadFileText(out + "/token");
  while (!token.empty() && token.back() == '\n') token.pop_back();
  ASSERT_TRUE(std::regex_match(token, std::regex("[0-9a-f]{64}"))) << "the trial saw no token: " << token;

  const std::string reader = cluster_.CreateUser("log-reader", "log-reader-password");
  auto client = cluster_.NewClient();
  client->SetBearerToken(reader);
  std::string logs;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        auto page = client->Get("/api/v1/trials/" + std::to_string(trial) + "/logs?limit=50000");
        logs = page.ok() ? page->body : "";
        return logs.find("token=") != std::string::npos;
      },
      20s))
      << logs;
  EXPECT_EQ(logs.find(token), std::string::npos) << "the token is in the trial's logs";
  EXPECT_NE(logs.find("token=[allocation token hidden]"), std::string::npos) << logs.substr(0, 2000);
  EXPECT_NE(logs.find("RING_ALLOCATION_TOKEN=[allocation token hidden]"), std::string::npos);
  auto cli = cluster_.Ring({"trial", "logs", std::to_string(trial)});
  EXPECT_EQ(cli.out.find(token), std::string::npos);
  for (const std::string log : {"master.log", "agent-agent-0.log"})
    EXPECT_EQ(ReadFileText(cluster_.dir() + "/" + log).find(token), std::string::npos) << log;
}

// An owner used to be able to undo an admin's decision on their experiment:
// PATCH it back to priority 1 or unlimited slots.
TEST_F(HardeningTest, AnOwnerCannotRaiseWhatAnAdminSet) {
  cluster_.StartMaster();
  const std::string owner = cluster_.CreateUser("owner", "owner-password");
  auto res = Submit(owner, SingleConfig("bounded", "resources:\n  priority: 40\n"), "true\n", false);
  ASSERT_EQ(res.status, 201) << res.body;
  const std::string target = "/api/v1/experiments/" + std::to_string(IdOf(res));
  auto as_owner = cluster_.NewClient();
  as_owner->SetBearerToken(owner);
  auto patch = [&](CheckedHttpClient& client, const nlohmann::json& body) {
    auto r = client.Request("PATCH", target, body.dump());
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : HttpResponse{};
  };
  // Before an admin set anything, the owner may.
  EXPECT_EQ(patch(*as_owner, {{"priority", 20}}).status, 200);
  EXPECT_EQ(patch(cluster_.client(), {{"priority", 30}, {"max_slots", 2}}).status, 200);

  auto refused = patch(*as_owner, {{"priority", 10}});
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_NE(refused.body.find("priority"), std::string::npos) << refused.body;
  for (const nlohmann::json& slots : {nlohmann::json(5), nlohmann::json(nullptr)}) {
    refused = patch(*as_owner, {{"max_slots", slots}});
    EXPECT_EQ(refused.status, 403) << refused.body;
    EXPECT_NE(refused.body.find("max_slots"), std::string::npos) << refused.body;
  }
  auto view = cluster_.GetJson(target);
  EXPECT_EQ(view["resources"]["priority"], 30);
  EXPECT_EQ(view["resources"]["max_slots"], 2);
  // Lowering is the owner's to do, and back up to the admin's bound.
  EXPECT_EQ(patch(*as_owner, {{"priority", 50}, {"max_slots", 1}}).status, 200);
  EXPECT_EQ(patch(*as_owner, {{"priority", 30}, {"max_slots", 2}}).status, 200);

  // The bound is kept across a restart.
  cluster_.StopMaster();
  cluster_.StartMaster();
  as_owner = cluster_.NewClient();
  as_owner->SetBearerToken(cluster_.SignIn("owner", "owner-password"));
  EXPECT_EQ(patch(*as_owner, {{"priority", 29}}).status, 403);
}

// A pool kept for named users (allowed_users) used to take anyone's work.
TEST_F(HardeningTest, APoolKeptForNamedUsersRefusesEveryoneElse) {
  const std::string config = cluster_.WriteFile("master.yaml",
                                                "resource_pools:\n"
                                                "  - name: default\n"
                                                "  - name: private\n"
                                                "    allowed_users: [carol]\n");
  cluster_.StartMaster({.extra_args = {"--config", config}});
  const std::string bob = cluster_.CreateUser("bob", "bob-password");
  const std::string carol = cluster_.CreateUser("carol", "carol-password");
  const std::string in_private = "resources:\n  resource_pool: private\n";
  auto refused = Submit(bob, SingleConfig("bob-private", in_private), "true\n", false);
  EXPECT_EQ(refused.status, 403) << refused.body;
  const auto error = nlohmann::json::parse(refused.body, nullptr, false);
  EXPECT_NE(error["error"].value("message", "").find("pool \"private\""), std::string::npos) << refused.body;
  EXPECT_EQ(Submit(bob, SingleConfig("bob-default"), "true\n", false).status, 201);
  EXPECT_EQ(Submit(carol, SingleConfig("carol-private", in_private), "true\n", false).status, 201);
  EXPECT_EQ(Submit(cluster_.admin_token(), SingleConfig("admin-private", in_private), "true\n", false).status,
            201);
  auto list = cluster_.GetJson("/api/v1/experiments?limit=100");
  for (const auto& e : list["experiments"]) EXPECT_NE(e.value("name", ""), "bob-private");
}

}  // namespace
}  // namespace ring::testing::hardening
