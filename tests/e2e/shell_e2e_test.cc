// Shells on a real master and agent, driven through the real `ring` CLI in
// a real pseudo-terminal (the test holds its master side, as a terminal
// emulator would): type a command and read its output, resize the window,
// Ctrl-C a foreground job, detach and reopen (the shell ran on, its screen
// comes back), kill it and see its slot freed. Another user is refused, and
// an allocation token read from inside a task opens no shell. A master
// killed and restarted keeps the shell: reopened, it is the same session.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ring_in_a_terminal.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::shell_e2e {
namespace {

using namespace std::chrono_literals;

nlohmann::json Shell(TestCluster& cluster, int64_t id) {
  return cluster.GetJson("/api/v1/shells/" + std::to_string(id));
}

// Starts a detached shell (with `extra` flags) and waits for it to run; its
// id, or 0 after a failure said why.
int64_t StartRunningShell(TestCluster& cluster, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"shell", "start", "--detach"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto started = cluster.Ring(args);
  EXPECT_EQ(started.exit_code, 0) << started.out << started.err;
  const int64_t id = std::atoll(started.out.c_str());
  EXPECT_GT(id, 0) << started.out;
  if (id <= 0) return 0;
  const bool running = TestCluster::WaitFor([&] { return Shell(cluster, id)["state"] == "RUNNING"; },
                                            std::chrono::seconds(30));
  EXPECT_TRUE(running) << Shell(cluster, id).dump();
  return running ? id : 0;
}

TEST(ShellE2E, ATerminalTypesResizesInterruptsDetachesAndComesBack) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  const int64_t id = StartRunningShell(cluster);
  ASSERT_GT(id, 0);
  const std::vector<std::string> open = {BinDir() + "/ring", "-m", cluster.url(), "shell", "open",
                                         std::to_string(id)};
  const std::map<std::string, std::string> env = {{"XDG_CONFIG_HOME", cluster.dir() + "/config"}};
  std::string token;
  {
    RingInATerminal ring(open, env);
    ASSERT_TRUE(ring.WaitFor("Ctrl-\\] detaches")) << ring.screen();
    ring.Type("echo hi-$((6*7))-$RING_TASK_KIND\r");
    ASSERT_TRUE(ring.WaitFor("hi-42-SHELL")) << ring.screen();
    ring.Type("stty size\r");
    ASSERT_TRUE(ring.WaitFor("24 80")) << ring.screen();
    ring.Resize(50, 132);
    std::this_thread::sleep_for(300ms);
    ring.Type("stty size\r");
    ASSERT_TRUE(ring.WaitFor("50 132")) << ring.screen();
    // Ctrl-C ends the foreground job, not the shell.
    ring.Type("sleep 60; echo slept-through\r");
    std::this_thread::sleep_for(500ms);
    ring.Type("\x03");
    ring.Type("echo after-$((2*21))\r");
    ASSERT_TRUE(ring.WaitFor("after-42", 10s)) << ring.screen();
    EXPECT_EQ(ring.screen().find("\nslept-through"), std::string::npos);
    ring.Type("echo token=$RING_ALLOCATION_TOKEN.\r");
    ASSERT_TRUE(ring.WaitFor("token=[0-9a-f]{64}\\.")) << ring.screen();
    std::smatch m;
    const std::string screen = ring.screen();
    ASSERT_TRUE(std::regex_search(screen, m, std::regex("token=([0-9a-f]{64})\\.")));
    token = m[1];
    ring.Type("cd /tmp; export MARK=still-here\r");
    ring.Type("\x1d");  // Ctrl-]: detach
    EXPECT_EQ(ring.Wait(), 0) << ring.screen();
    EXPECT_NE(ring.screen().find("it runs on"), std::string::npos) << ring.screen();
  }
  EXPECT_EQ(Shell(cluster, id)["state"], "RUNNING") << "closing the terminal ended the shell";

  // Reopened: the screen comes back, and the shell is the same one.
  {
    RingInATerminal ring(open, env);
    ASSERT_TRUE(ring.WaitFor("hi-42-SHELL")) << "no scrollback: " << ring.screen();
    ring.Type("echo $MARK in $(pwd)\r");
    ASSERT_TRUE(ring.WaitFor("still-here in /tmp")) << ring.screen();
    ring.Type("\x1d");
    EXPECT_EQ(ring.Wait(), 0) << ring.screen();
  }

  // Another user, and a task's allocation token, open nothing.
  const std::string eve = cluster.CreateUser("eve", "eve-password");
  auto refused = cluster.RingAs("eve", eve, {"shell", "open", std::to_string(id)});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("HTTP 403"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("belongs to admin"), std::string::npos) << refused.err;
  ASSERT_FALSE(token.empty());
  auto with_token = cluster.RingAs("task", token, {"shell", "open", std::to_string(id)});
  EXPECT_NE(with_token.exit_code, 0);
  EXPECT_NE(with_token.err.find("HTTP 401"), std::string::npos) << with_token.err;
  auto eve_kill = cluster.RingAs("eve", eve, {"shell", "kill", std::to_string(id)});
  EXPECT_NE(eve_kill.exit_code, 0);

  // Killed: it ends and its slot is free for the next task.
  ASSERT_EQ(cluster.Ring({"shell", "kill", std::to_string(id)}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return !Shell(cluster, id)["ended_at"].is_null(); }, 30s))
      << Shell(cluster, id).dump();
  auto next = cluster.Ring({"cmd", "run", "--", "echo", "the slot is free"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_NE(next.out.find("the slot is free"), std::string::npos);
  auto closed = cluster.Ring({"shell", "open", std::to_string(id)});
  EXPECT_NE(closed.exit_code, 0);
  EXPECT_NE(closed.err.find("has ended"), std::string::npos) << closed.err;
}

TEST(ShellE2E, TheShellsExitEndsTheTerminalAndTheTask) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  cluster.Ring({"user", "whoami"});  // signs the CLI in
  RingInATerminal ring({BinDir() + "/ring", "-m", cluster.url(), "shell", "start"},
                       {{"XDG_CONFIG_HOME", cluster.dir() + "/config"}});
  ASSERT_TRUE(ring.WaitFor("Ctrl-\\] detaches")) << ring.screen();
  ring.Type("echo started-$((40+2))\r");
  ASSERT_TRUE(ring.WaitFor("started-42")) << ring.screen();
  ring.Type("exit 3\r");
  EXPECT_EQ(ring.Wait(), 0) << ring.screen();
  EXPECT_NE(ring.screen().find("the shell exited"), std::string::npos) << ring.screen();
  auto list = cluster.GetJson("/api/v1/shells")["shells"];
  ASSERT_EQ(list.size(), 1u);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !cluster.GetJson("/api/v1/shells")["shells"][0]["ended_at"].is_null(); }, 20s));
  EXPECT_EQ(cluster.GetJson("/api/v1/shells")["shells"][0]["exit_code"], 3);
}

TEST(ShellE2E, AShellIdleForItsTimeoutEndsAndFreesItsSlot) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  const std::string config = cluster.WriteFile("shell.yaml", "idle_timeout: 3s\n");
  const int64_t id = StartRunningShell(cluster, {"--config-file", config});
  ASSERT_GT(id, 0);
  // Attached, it is not idle however long nothing is typed.
  {
    RingInATerminal ring({BinDir() + "/ring", "-m", cluster.url(), "shell", "open", std::to_string(id)},
                         {{"XDG_CONFIG_HOME", cluster.dir() + "/config"}});
    ASSERT_TRUE(ring.WaitFor("Ctrl-\\] detaches")) << ring.screen();
    std::this_thread::sleep_for(5s);
    EXPECT_EQ(Shell(cluster, id)["state"], "RUNNING") << "ended while a terminal was attached";
    ring.Type("\x1d");
    EXPECT_EQ(ring.Wait(), 0) << ring.screen();
  }
  // Detached for its idle timeout: it ends, and a waiting command takes the slot.
  auto waiting = cluster.Ring({"cmd", "run", "-d", "--", "echo", "ran after the idle shell"});
  ASSERT_EQ(waiting.exit_code, 0) << waiting.err;
  // (An interactive shell ignores SIGTERM: it ends at the kill grace.)
  ASSERT_TRUE(TestCluster::WaitFor([&] { return !Shell(cluster, id)["end_cause"].is_null(); }, 30s))
      << Shell(cluster, id).dump();
  EXPECT_EQ(Shell(cluster, id)["end_cause"], "IDLE_TIMEOUT") << Shell(cluster, id).dump();
  const int64_t command = std::atoll(waiting.out.c_str());
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return cluster.GetJson("/api/v1/commands/" + std::to_string(command))["exit_code"] == 0; }, 30s));
}

TEST(ShellE2E, AMasterKilledAndRestartedKeepsTheShell) {
  TestCluster cluster;
  const TestCluster::MasterOptions master{.heartbeat_timeout_ms = 1500, .reconnect_window_ms = 1500};
  cluster.StartMaster(master);
  cluster.StartAgent("a1", 1);
  const int64_t id = StartRunningShell(cluster);
  ASSERT_GT(id, 0);
  const std::map<std::string, std::string> env = {{"XDG_CONFIG_HOME", cluster.dir() + "/config"}};
  const auto open = [&] {
    return std::vector<std::string>{BinDir() + "/ring", "-m", cluster.url(), "shell", "open",
                                    std::to_string(id)};
  };
  const std::string file = cluster.dir() + "/written-by-the-shell";
  {
    RingInATerminal ring(open(), env);
    ASSERT_TRUE(ring.WaitFor("Ctrl-\\] detaches")) << ring.screen();
    ring.Type("export MARK=kept-$((6*7)); echo $$ > " + file + "\r");
    ASSERT_TRUE(TestCluster::WaitFor([&] { return !ReadFileText(file).empty(); }, 10s)) << ring.screen();
    ring.Type("\x1d");
    EXPECT_EQ(ring.Wait(), 0) << ring.screen();
  }
  const std::string pid = ReadFileText(file).substr(0, ReadFileText(file).find('\n'));
  ASSERT_FALSE(pid.empty());
  const std::string allocation = Shell(cluster, id)["allocation_id"];

  cluster.KillMaster();
  std::this_thread::sleep_for(1s);
  cluster.StartMaster(master);
  EXPECT_EQ(Shell(cluster, id)["state"], "RUNNING") << Shell(cluster, id).dump();
  // The agent comes back and the master adopts its allocation, not a new one.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto agents = cluster.GetJson("/api/v1/agents")["agents"];  // a copy: the answer is a temporary
        for (const auto& a : agents)
          if (a.value("state", "") == "connected") return true;
        return false;
      },
      30s))
      << cluster.GetJson("/api/v1/agents").dump();
  EXPECT_EQ(Shell(cluster, id)["allocation_id"], allocation);
  cluster.Ring({"user", "whoami"});  // signs the CLI in to the new master's address

  // Reopened: the same shell process, its variable still set.
  {
    RingInATerminal ring(open(), env);
    ASSERT_TRUE(ring.WaitFor("Ctrl-\\] detaches")) << ring.screen();
    ring.Type("echo \"$MARK pid=$$\"\r");
    ASSERT_TRUE(ring.WaitFor("kept-42 pid=" + pid)) << ring.screen();
    ring.Type("\x1d");
    EXPECT_EQ(ring.Wait(), 0) << ring.screen();
  }
  EXPECT_EQ(Shell(cluster, id)["state"], "RUNNING");
  ASSERT_EQ(cluster.Ring({"shell", "kill", std::to_string(id)}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return !Shell(cluster, id)["ended_at"].is_null(); }, 30s))
      << Shell(cluster, id).dump();
}

}  // namespace
}  // namespace ring::testing::shell_e2e
