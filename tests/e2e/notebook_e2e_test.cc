// Notebooks on a real master and agent with Debian's Jupyter Notebook:
// `ring notebook start` waits until Jupyter answers and prints a one-time
// link; through the master's proxy (the link's cookie, Jupyter's token
// added by the proxy) the owner lists kernels, starts one and runs a cell
// over its WebSocket; an admin opens it too, another user and a bearer
// token do not. Idle per notebook_idle_type, the notebook ends
// IDLE_TIMEOUT and a waiting trial starts on its slot. Skips, saying why,
// when Jupyter Notebook is not installed.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/support/proxy_client.h"
#include "tests/support/raw_connection.h"
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

// A WebSocket to Jupyter's kernel channels through the proxy: sends
// `code` as an execute_request and returns what the kernel printed on
// stdout ("" when it did not within 30 s, or the upgrade was refused).
class KernelSocket {
 public:
  KernelSocket(int port, int64_t task, const std::string& kernel, const std::string& cookie) : c_(port) {
    const std::string host = "127.0.0.1:" + std::to_string(port);
    c_.Send("GET /proxy/" + std::to_string(task) + "/api/kernels/" + kernel +
            "/channels HTTP/1.1\r\nHost: " + host + "\r\nOrigin: http://" + host +
            "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            "Cookie: ring_proxy=" +
            cookie + "\r\n\r\n");
    std::string head;
    char ch;
    while (head.find("\r\n\r\n") == std::string::npos && c_.Read(&ch, 1) == 1) head += ch;
    status_ = head.size() >= 12 ? std::stoi(head.substr(9, 3)) : 0;
  }
  int status() const { return status_; }

  std::string Run(const std::string& code) {
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
    SendText(request.dump());
    std::string printed;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto frame = ReadFrame();
      if (!frame) break;
      const auto msg = nlohmann::json::parse(*frame, nullptr, false);
      if (!msg.is_object() || msg["parent_header"].value("msg_id", "") != "ring-1") continue;
      const std::string type = msg["header"].value("msg_type", "");
      if (type == "stream" && msg["content"].value("name", "") == "stdout")
        printed += msg["content"].value("text", "");
      if (type == "status" && msg["content"].value("execution_state", "") == "idle") break;
    }
    return printed;
  }

 private:
  void SendText(const std::string& text) {
    std::string frame = {static_cast<char>(0x81)};
    if (text.size() < 126) {
      frame += static_cast<char>(0x80 | text.size());
    } else {
      frame += static_cast<char>(0x80 | 126);
      frame += static_cast<char>((text.size() >> 8) & 0xff);
      frame += static_cast<char>(text.size() & 0xff);
    }
    const char mask[4] = {7, 1, 4, 2};
    frame.append(mask, 4);
    for (size_t i = 0; i < text.size(); ++i) frame += static_cast<char>(text[i] ^ mask[i % 4]);
    c_.Send(frame);
  }
  // The next text or binary frame's payload (the server's are unmasked).
  std::optional<std::string> ReadFrame() {
    for (;;) {
      unsigned char h[2];
      if (c_.Read(reinterpret_cast<char*>(h), 2) != 2) return std::nullopt;
      uint64_t n = h[1] & 0x7f;
      if (n >= 126) {
        unsigned char ext[8];
        const size_t bytes = n == 126 ? 2 : 8;
        if (c_.Read(reinterpret_cast<char*>(ext), bytes) != static_cast<ssize_t>(bytes)) return std::nullopt;
        n = 0;
        for (size_t i = 0; i < bytes; ++i) n = (n << 8) | ext[i];
      }
      std::string payload(n, '\0');
      if (n > 0 && c_.Read(payload.data(), n) != static_cast<ssize_t>(n)) return std::nullopt;
      const int opcode = h[0] & 0x0f;
      if (opcode == 8) return std::nullopt;
      if (opcode == 1 || opcode == 2) return payload;
    }
  }

  RawConnection c_;
  int status_ = 0;
};

class NotebookE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveJupyter())
      GTEST_SKIP() << "Jupyter Notebook is not installed (deploy/install-deps.sh installs it)";
    TestCluster::MasterOptions master;
    master.extra_args = {"--config", cluster_.WriteFile("master.yaml",
                                                        "interactive:\n"
                                                        "  idle_timeout: 1h\n"
                                                        "  max_idle_timeout: 2h\n"
                                                        "  notebook_look_interval_ms: 500\n")};
    cluster_.StartMaster(master);
    cluster_.StartAgent("a1", 1);
  }
  TestCluster cluster_;
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
  {
    KernelSocket socket(port, id, kernel_id, cookie);
    ASSERT_EQ(socket.status(), 101);
    EXPECT_EQ(socket.Run("print(6*7)"), "42\n");
  }

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

}  // namespace
}  // namespace ring::testing::notebook_e2e
