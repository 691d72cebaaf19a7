// Notebooks on a real master and agent with Debian's Jupyter Notebook:
// `ring notebook start` waits until Jupyter answers and prints a one-time
// link; through the master's proxy (the link's cookie, Jupyter's token
// added by the proxy) the owner lists kernels, starts one and runs a cell
// over its WebSocket; an admin opens it too, another user and a bearer
// token do not. Idle per notebook_idle_type, the notebook ends
// IDLE_TIMEOUT and a waiting trial starts on its slot. Skips, saying why,
// when Jupyter Notebook is not installed.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/support/proxy_client.h"
#include "tests/support/raw_connection.h"
#include "tests/support/raw_websocket.h"
#include "tests/support/test_account.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::notebook_e2e {
namespace {

using namespace std::chrono_literals;

bool HaveJupyter() {
  return ::access("/usr/bin/jupyter-notebook", X_OK) == 0 &&
         std::filesystem::exists("/usr/share/jupyter/kernels/python3/kernel.json");
}

nlohmann::json Notebook(TestCluster& cluster, int64_t id) {
  return cluster.GetJson("/api/v1/notebooks/" + std::to_string(id));
}

// Runs `code` in a Jupyter kernel over its WebSocket through the proxy
// (the cookie of `task`'s link) and returns what it printed on stdout;
// "" when it printed nothing within 30 s. `status` gets the upgrade's.
std::string RunCell(int port, int64_t task, const std::string& kernel, const std::string& cookie,
                    const std::string& code, int* status) {
  const std::string origin = "http://127.0.0.1:" + std::to_string(port);
  RawWebSocket ws(port, "/proxy/" + std::to_string(task) + "/api/kernels/" + kernel + "/channels",
                  {{"Origin", origin}, {"Cookie", "ring_proxy=" + cookie}});
  *status = ws.status();
  if (ws.status() != 101) return "";
  const nlohmann::json request = {{"header",
                                   {{"msg_id", "ring-1"},
                                    {"username", "test"},
                                    {"session", "ring-test"},
                                    {"msg_type", "execute_request"},
                                    {"version", "5.3"}}},
                                  {"parent_header", nlohmann::json::object()},
                                  {"metadata", nlohmann::json::object()},
                                  {"content",
                                   {{"code", code},
                                    {"silent", false},
                                    {"store_history", true},
                                    {"user_expressions", nlohmann::json::object()},
                                    {"allow_stdin", false},
                                    {"stop_on_error", true}}},
                                  {"channel", "shell"},
                                  {"buffers", nlohmann::json::array()}};
  ws.SendText(request.dump());
  std::string printed;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto frame = ws.ReadFrame();
    if (!frame) continue;
    const auto msg = nlohmann::json::parse(*frame, nullptr, false);
    if (!msg.is_object() || msg["parent_header"].value("msg_id", "") != "ring-1") continue;
    const std::string type = msg["header"].value("msg_type", "");
    if (type == "stream" && msg["content"].value("name", "") == "stdout")
      printed += msg["content"].value("text", "");
    if (type == "status" && msg["content"].value("execution_state", "") == "idle") break;
  }
  return printed;
}

class NotebookE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveJupyter())
      GTEST_SKIP() << "Jupyter Notebook is not installed (deploy/install-deps.sh installs it)";
    master_.heartbeat_timeout_ms = 1500;
    master_.reconnect_window_ms = 1500;
    master_.extra_args = {"--config", cluster_.WriteFile("master.yaml",
                                                         "interactive:\n"
                                                         "  idle_timeout: 1h\n"
                                                         "  max_idle_timeout: 2h\n"
                                                         "  notebook_look_interval_ms: 500\n")};
    cluster_.StartMaster(master_);
    cluster_.StartAgent("a1", 1);
  }
  TestCluster cluster_;
  TestCluster::MasterOptions master_;
};

TEST_F(NotebookE2E, JupyterServesItsOwnerAndAdminsThroughTheProxyAndNoOneElse) {
  const std::string alice = cluster_.CreateUser("alice", "alice-password");
  const std::string eve = cluster_.CreateUser("eve", "eve-password");
  // A context folder: Jupyter shows its files.
  const std::string context = cluster_.MakeModelDir("analysis", {{"data.csv", "x,y\n1,2\n"}});
  auto started = cluster_.RingAs("alice", alice, {"notebook", "start", "--context", context});
  ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
  const std::string url = started.out.substr(0, started.out.find('\n'));
  ASSERT_NE(url.find("/proxy-ticket/"), std::string::npos) << started.out;
  const auto list = cluster_.GetJson("/api/v1/notebooks");
  ASSERT_EQ(list["notebooks"].size(), 1u) << list.dump();
  const int64_t id = list["notebooks"][0]["id"];
  const auto notebook = Notebook(cluster_, id);
  EXPECT_EQ(notebook["state"], "RUNNING");
  EXPECT_EQ(notebook["owner"], "alice");
  EXPECT_EQ(notebook["service"]["name"], "jupyter") << notebook.dump();
  EXPECT_EQ(notebook["idle_timeout_s"], 3600) << "master.yaml's interactive.idle_timeout is the default";
  EXPECT_EQ(notebook["notebook_idle_type"], "kernels_or_terminals");
  EXPECT_EQ(notebook.dump().find("token"), std::string::npos) << "Jupyter's token is never shown";

  const int port = PortOf(url);
  const std::string cookie = RedeemLink(url, id);
  ASSERT_FALSE(cookie.empty());
  const std::string base = "/proxy/" + std::to_string(id) + "/";
  const std::map<std::string, std::string> with_cookie = {{"Cookie", "ring_proxy=" + cookie}};
  // Jupyter answers without asking for its token: the proxy sent it.
  Answer tree = Exchange(port, "GET", base + "tree", with_cookie);
  EXPECT_EQ(tree.status, 200) << tree.body.substr(0, 500);
  Answer files = Exchange(port, "GET", base + "api/contents", with_cookie);
  ASSERT_EQ(files.status, 200) << files.body;
  EXPECT_NE(files.body.find("data.csv"), std::string::npos) << files.body;
  // A kernel, and a cell run over its WebSocket.
  Answer kernel = Exchange(port, "POST", base + "api/kernels", with_cookie, "{}");
  ASSERT_EQ(kernel.status, 201) << kernel.body;
  const std::string kernel_id = nlohmann::json::parse(kernel.body)["id"];
  int upgraded = 0;
  EXPECT_EQ(RunCell(port, id, kernel_id, cookie, "print(6*7)", &upgraded), "42\n");
  EXPECT_EQ(upgraded, 101);

  // Another user: no link, and no way in without one.
  auto eve_link = cluster_.RingAs("eve", eve, {"notebook", "open", std::to_string(id)});
  EXPECT_NE(eve_link.exit_code, 0);
  EXPECT_NE(eve_link.err.find("belongs to alice"), std::string::npos) << eve_link.err;
  EXPECT_EQ(Exchange(port, "GET", base + "api/kernels", {}).status, 401);
  EXPECT_EQ(Exchange(port, "GET", base + "api/kernels", {{"Authorization", "Bearer " + eve}}).status, 401);
  EXPECT_EQ(Exchange(port, "GET", base + "api/kernels", {{"Authorization", "Bearer " + alice}}).status, 401);
  // An admin opens it with a link of their own.
  auto admin_link = cluster_.Ring({"notebook", "open", std::to_string(id)});
  ASSERT_EQ(admin_link.exit_code, 0) << admin_link.err;
  const std::string admin_cookie = RedeemLink(admin_link.out.substr(0, admin_link.out.find('\n')), id);
  EXPECT_EQ(Exchange(port, "GET", base + "api/kernels", {{"Cookie", "ring_proxy=" + admin_cookie}}).status,
            200);

  // Killed: it ends, and its link and cookie open nothing.
  ASSERT_EQ(cluster_.RingAs("alice", alice, {"notebook", "kill", std::to_string(id)}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return !Notebook(cluster_, id)["ended_at"].is_null(); }, 30s));
  EXPECT_EQ(Notebook(cluster_, id)["end_cause"], "USER_KILL");
  EXPECT_EQ(Exchange(port, "GET", base + "api/kernels", with_cookie).status, 502);
  auto closed = cluster_.RingAs("alice", alice, {"notebook", "open", std::to_string(id)});
  EXPECT_NE(closed.exit_code, 0);
  EXPECT_NE(closed.err.find("has ended"), std::string::npos) << closed.err;
}

TEST_F(NotebookE2E, AnIdleNotebookEndsAndAWaitingTrialTakesItsSlot) {
  // Longer than the master's maximum: refused, naming the key.
  auto too_long = cluster_.Ring(
      {"notebook", "start", "-d", "--config-file", cluster_.WriteFile("long.yaml", "idle_timeout: 3h\n")});
  EXPECT_NE(too_long.exit_code, 0);
  EXPECT_NE(too_long.err.find("interactive.max_idle_timeout"), std::string::npos) << too_long.err;

  const std::string config =
      cluster_.WriteFile("nb.yaml", "idle_timeout: 4s\nnotebook_idle_type: kernels_or_terminals\n");
  auto started = cluster_.Ring({"notebook", "start", "--config-file", config});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const int64_t id = cluster_.GetJson("/api/v1/notebooks")["notebooks"][0]["id"];
  const std::string url = started.out.substr(0, started.out.find('\n'));
  const int port = PortOf(url);
  const std::string cookie = RedeemLink(url, id);
  const std::string base = "/proxy/" + std::to_string(id) + "/";
  const std::map<std::string, std::string> with_cookie = {{"Cookie", "ring_proxy=" + cookie}};
  Answer kernel = Exchange(port, "POST", base + "api/kernels", with_cookie, "{}");
  ASSERT_EQ(kernel.status, 201) << kernel.body;
  const std::string kernel_id = nlohmann::json::parse(kernel.body)["id"];

  // A trial waits for the notebook's slot.
  const std::string model = BinDir() + "/../examples/quadratic/model";
  auto experiment =
      cluster_.Ring({"experiment", "create", SourceDir() + "/configs/experiments/quadratic.yaml", model});
  ASSERT_EQ(experiment.exit_code, 0) << experiment.err;
  // A kernel runs: not idle, however long.
  std::this_thread::sleep_for(7s);
  EXPECT_EQ(Notebook(cluster_, id)["state"], "RUNNING") << Notebook(cluster_, id).dump();
  EXPECT_EQ(cluster_.GetJson("/api/v1/experiments/1/trials")["trials"].size(), 1u);
  EXPECT_NE(cluster_.GetJson("/api/v1/experiments/1/trials")["trials"][0]["state"], "COMPLETED");

  // No kernel left: idle, it ends after 4 s and the trial runs to its end.
  EXPECT_EQ(Exchange(port, "DELETE", base + "api/kernels/" + kernel_id, with_cookie).status, 204);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return !Notebook(cluster_, id)["end_cause"].is_null(); }, 30s))
      << Notebook(cluster_, id).dump();
  EXPECT_EQ(Notebook(cluster_, id)["end_cause"], "IDLE_TIMEOUT");
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return cluster_.GetJson("/api/v1/experiments/1")["state"] == "COMPLETED"; }, 60s))
      << cluster_.GetJson("/api/v1/experiments/1").dump();
}

// A master killed and restarted reattaches a running notebook, like a
// trial: the launcher announces Jupyter again, and the same kernel (its
// variables kept) is served through a new link.
TEST_F(NotebookE2E, AMasterKilledAndRestartedServesTheSameNotebookAgain) {
  auto started = cluster_.Ring({"notebook", "start"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const int64_t id = cluster_.GetJson("/api/v1/notebooks")["notebooks"][0]["id"];
  std::string url = started.out.substr(0, started.out.find('\n'));
  std::string cookie = RedeemLink(url, id);
  Answer kernel = Exchange(PortOf(url), "POST", "/proxy/" + std::to_string(id) + "/api/kernels",
                           {{"Cookie", "ring_proxy=" + cookie}}, "{}");
  ASSERT_EQ(kernel.status, 201) << kernel.body;
  const std::string kernel_id = nlohmann::json::parse(kernel.body)["id"];
  int upgraded = 0;
  EXPECT_EQ(RunCell(PortOf(url), id, kernel_id, cookie, "x = 41; print('set')", &upgraded), "set\n");

  cluster_.KillMaster();
  cluster_.StartMaster(master_);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Notebook(cluster_, id)["service"].is_object(); }, 40s))
      << Notebook(cluster_, id).dump();
  EXPECT_EQ(Notebook(cluster_, id)["state"], "RUNNING");
  EXPECT_EQ(Notebook(cluster_, id)["allocation_id"], "notebook-" + std::to_string(id) + ".0");
  auto opened = cluster_.Ring({"notebook", "open", std::to_string(id)});
  ASSERT_EQ(opened.exit_code, 0) << opened.err;
  url = opened.out.substr(0, opened.out.find('\n'));
  cookie = RedeemLink(url, id);
  EXPECT_EQ(RunCell(PortOf(url), id, kernel_id, cookie, "print(x + 1)", &upgraded), "42\n");
}

// On an agent that runs tasks as their owners, a linked user's notebook,
// Jupyter and its kernels, runs as her account (whose home does not exist:
// Jupyter keeps its files in a folder of its own), never as root.
TEST(NotebookAsOwnerE2E, ALinkedUsersNotebookRunsAsHerAccount) {
  if (!HaveJupyter())
    GTEST_SKIP() << "Jupyter Notebook is not installed (deploy/install-deps.sh installs it)";
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root: the test makes a Unix account and the agent switches users";
  TestAccount owner("nbo");
  TestCluster cluster;
  ASSERT_EQ(::chmod(cluster.dir().c_str(), 0711), 0);
  cluster.StartMaster();
  const std::string dana = cluster.CreateUser("dana", "dana-password");
  ASSERT_EQ(cluster.Ring({"user", "link-unix", "dana", "--unix-user", owner.name()}).exit_code, 0);
  TestCluster::AgentOptions agent;
  agent.run_as_owner = true;
  cluster.StartAgent("owner-agent", 1, agent);
  auto started = cluster.RingAs("dana", dana, {"notebook", "start"});
  ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
  const int64_t id = cluster.GetJson("/api/v1/notebooks")["notebooks"][0]["id"];
  const std::string url = started.out.substr(0, started.out.find('\n'));
  const int port = PortOf(url);
  const std::string cookie = RedeemLink(url, id);
  Answer kernel = Exchange(port, "POST", "/proxy/" + std::to_string(id) + "/api/kernels",
                           {{"Cookie", "ring_proxy=" + cookie}}, "{}");
  ASSERT_EQ(kernel.status, 201) << kernel.body;
  int upgraded = 0;
  const std::string printed = RunCell(port, id, nlohmann::json::parse(kernel.body)["id"], cookie,
                                      "import os; print(os.getuid(), os.getgid())", &upgraded);
  EXPECT_EQ(printed, std::to_string(owner.uid()) + " " + std::to_string(owner.gid()) + "\n");
  ASSERT_EQ(cluster.Ring({"notebook", "kill", std::to_string(id)}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return !Notebook(cluster, id)["ended_at"].is_null(); }, 30s));
}

}  // namespace
}  // namespace ring::testing::notebook_e2e
