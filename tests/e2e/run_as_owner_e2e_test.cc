// `ring user link-unix` end to end: an admin links a Ringmaster user to a
// Unix account made for the test (useradd), the user submits the quadratic
// example to an agent that runs tasks as their owners (not single-user),
// and the trial's processes run as that account: the test reads the uid and
// gid the trial printed, the owner and mode of its work folder and of a file
// it made, and the owner of each checkpoint folder it wrote. Needs root: it
// makes accounts and the agent switches users.
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/support/raw_websocket.h"
#include "tests/support/test_account.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::run_as_owner_e2e {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Prints who runs it and what it owns, then runs the quadratic trial.
constexpr const char* kProbe = R"sh(echo "probe uid=$(id -u) gid=$(id -g)"
echo "probe folder=$(stat -c '%u %g %a' .)"
echo made-by-the-trial > made-by-the-trial.txt
echo "probe file=$(stat -c '%u %g' made-by-the-trial.txt)"
exec sh run.sh
)sh";

constexpr const char* kConfig = R"(name: run-as-owner
entrypoint: sh probe.sh
hyperparameters:
  learning_rate: 0.05
  batch_size: 32
  report_every: 50
  momentum: 0.0
  checkpoint_every: 100
searcher:
  name: single
  metric: validation_loss
  smaller_is_better: true
  max_length:
    batches: 200
max_restarts: 0
min_checkpoint_period:
  batches: 100
)";

std::pair<uid_t, gid_t> OwnerOf(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {~uid_t{0}, ~gid_t{0}};
  return {st.st_uid, st.st_gid};
}

TEST(RunAsOwnerE2E, ALinkedUsersTrialRunsAsTheirUnixAccountAndOwnsItsFiles) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root: the test makes Unix accounts and the agent switches users";
  TestAccount owner("own");
  TestAccount unlinked("unl");
  ASSERT_NE(owner.uid(), 0u);
  ASSERT_NE(unlinked.uid(), 0u);
  TestCluster cluster;  // stopped (agent first) before the accounts are removed

  // The folders a team sets up: every folder above the agent's work folder
  // lets other accounts pass (o+x, no listing), and the checkpoint root lets
  // each account make its own checkpoint folders but not remove others'
  // (sticky, like /tmp; the runtime opens it to sync each new folder).
  ASSERT_EQ(::chmod(cluster.dir().c_str(), 0711), 0);
  const std::string checkpoints = cluster.dir() + "/checkpoints";
  fs::create_directories(checkpoints);
  ASSERT_EQ(::chmod(checkpoints.c_str(), 01777), 0);
  const std::string master_yaml = cluster.WriteFile("master.yaml", "checkpoint_root: " + checkpoints + "\n");
  TestCluster::MasterOptions master;
  master.extra_args = {"--config", master_yaml};
  cluster.StartMaster(master);

  // The admin makes carol and links her to the account, by name.
  const std::string carol_token = cluster.CreateUser("carol", "carol-password");
  ASSERT_FALSE(carol_token.empty());
  auto linked = cluster.Ring({"user", "link-unix", "carol", "--unix-user", owner.name()});
  ASSERT_EQ(linked.exit_code, 0) << linked.err;
  const std::string ids = std::to_string(owner.uid()) + ":" + std::to_string(owner.gid());
  EXPECT_NE(linked.out.find(owner.name() + " " + ids), std::string::npos) << linked.out;
  auto users = cluster.Ring({"user", "list"});
  EXPECT_NE(users.out.find(owner.name() + " " + ids), std::string::npos) << users.out;

  TestCluster::AgentOptions agent;
  agent.run_as_owner = true;
  agent.extra_args = {"--unlinked-user", unlinked.name()};
  cluster.StartAgent("owner-agent", 1, agent);
  auto agents = cluster.Ring({"agent", "list"});
  ASSERT_EQ(agents.exit_code, 0) << agents.err;
  ASSERT_NE(agents.out.find("as owner"), std::string::npos)
      << "the agent must run tasks as their owners (run as root, not --single-user):\n"
      << agents.out;

  // Carol submits the quadratic example, wrapped in the probe.
  const std::string model = cluster.dir() + "/model";
  fs::copy(BinDir() + "/../examples/quadratic/model", model, fs::copy_options::recursive);
  std::ofstream(model + "/probe.sh") << kProbe;
  const std::string config = cluster.WriteFile("run-as-owner.yaml", kConfig);
  auto created = RunCommand({BinDir() + "/ring", "-m", cluster.url(), "experiment", "create", config, model},
                            {{"RING_TOKEN", carol_token}, {"XDG_CONFIG_HOME", cluster.dir() + "/carol"}});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto state = cluster.GetJson("/api/v1/experiments/1").value("state", "");
        return state == "COMPLETED" || state == "ERROR" || state == "CANCELED";
      },
      120s));
  auto experiment = cluster.GetJson("/api/v1/experiments/1");
  EXPECT_EQ(experiment["owner"], "carol");
  const nlohmann::json logs = cluster.GetJson("/api/v1/trials/1/logs?limit=1000");
  if (experiment["state"] != "COMPLETED") cluster.DumpLogs();
  ASSERT_EQ(experiment["state"], "COMPLETED") << experiment.dump() << "\n" << logs.dump(1);

  // The trial's processes ran as the linked account, in a folder of its own.
  std::map<std::string, std::string> probe;
  for (const auto& line : logs["logs"]) {
    const std::string text = line.value("line", "");
    if (text.rfind("probe ", 0) != 0) continue;
    const auto eq = text.find('=');
    if (eq != std::string::npos) probe[text.substr(6, eq - 6)] = text.substr(eq + 1);
  }
  const std::string uid = std::to_string(owner.uid());
  const std::string gid = std::to_string(owner.gid());
  EXPECT_EQ(probe["uid"], uid + " gid=" + gid);
  EXPECT_EQ(probe["folder"], uid + " " + gid + " 700") << "the work folder is the account's, 0700";
  EXPECT_EQ(probe["file"], uid + " " + gid);

  // Every checkpoint it wrote (and the master kept) is the account's, folder
  // and files.
  auto listed = cluster.GetJson("/api/v1/trials/1/checkpoints");
  ASSERT_FALSE(listed["checkpoints"].empty()) << listed.dump();
  int checked = 0;
  for (const auto& c : listed["checkpoints"]) {
    if (c.value("state", "") != "ACTIVE") continue;  // garbage collected already
    const std::string uuid = c.value("uuid", "");
    fs::path dir;
    for (const auto& entry : fs::recursive_directory_iterator(checkpoints))
      if (entry.is_directory() && entry.path().filename() == uuid) dir = entry.path();
    ASSERT_FALSE(dir.empty()) << "checkpoint " << uuid << " is not under " << checkpoints;
    EXPECT_EQ(OwnerOf(dir), std::make_pair(owner.uid(), owner.gid())) << dir;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      EXPECT_EQ(OwnerOf(entry.path()).first, owner.uid()) << entry.path();
      ++checked;
    }
  }
  EXPECT_GT(checked, 0) << "the checkpoints hold no files";

  // Unlinked, her next trial would run as the agent's unprivileged account.
  ASSERT_EQ(cluster.Ring({"user", "unlink-unix", "carol"}).exit_code, 0);
  EXPECT_TRUE(cluster.GetJson("/api/v1/users")["users"][1]["unix"].is_null());
}

// A command runs as its owner's account exactly like a trial's ranks: a
// linked user's as her account in a folder of its own, an unlinked user's as
// the agent's unlinked account, never as root.
TEST(RunAsOwnerE2E, CommandsRunAsTheirOwnersAccount) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root: the test makes Unix accounts and the agent switches users";
  TestAccount owner("cmo");
  TestAccount unlinked("cmu");
  TestCluster cluster;
  ASSERT_EQ(::chmod(cluster.dir().c_str(), 0711), 0);
  cluster.StartMaster();
  const std::string dana = cluster.CreateUser("dana", "dana-password");
  const std::string eve = cluster.CreateUser("eve", "eve-password");
  ASSERT_EQ(cluster.Ring({"user", "link-unix", "dana", "--unix-user", owner.name()}).exit_code, 0);
  TestCluster::AgentOptions agent;
  agent.run_as_owner = true;
  agent.extra_args = {"--unlinked-user", unlinked.name()};
  cluster.StartAgent("owner-agent", 1, agent);

  const std::vector<std::string> probe = {
      "cmd", "run", "--", "sh", "-c", "echo probe $(id -u):$(id -g) $(stat -c '%u:%g %a' .)"};
  auto as_dana = cluster.RingAs("dana", dana, probe);
  ASSERT_EQ(as_dana.exit_code, 0) << as_dana.out << as_dana.err;
  const std::string ids = std::to_string(owner.uid()) + ":" + std::to_string(owner.gid());
  EXPECT_NE(as_dana.out.find("probe " + ids + " " + ids + " 700"), std::string::npos) << as_dana.out;
  auto as_eve = cluster.RingAs("eve", eve, probe);
  ASSERT_EQ(as_eve.exit_code, 0) << as_eve.out << as_eve.err;
  EXPECT_NE(as_eve.out.find("probe " + std::to_string(unlinked.uid()) + ":"), std::string::npos)
      << as_eve.out;
}

// A shell, too: its terminal's process runs as its owner's account, never
// as the agent's root (what the terminal shows, read over its WebSocket).
TEST(RunAsOwnerE2E, ShellsRunAsTheirOwnersAccount) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root: the test makes Unix accounts and the agent switches users";
  TestAccount owner("sho");
  TestCluster cluster;
  ASSERT_EQ(::chmod(cluster.dir().c_str(), 0711), 0);
  cluster.StartMaster();
  const std::string dana = cluster.CreateUser("dana", "dana-password");
  ASSERT_EQ(cluster.Ring({"user", "link-unix", "dana", "--unix-user", owner.name()}).exit_code, 0);
  TestCluster::AgentOptions agent;
  agent.run_as_owner = true;
  cluster.StartAgent("owner-agent", 1, agent);
  // The account's login shell is nologin: the config says what runs.
  const std::string config = cluster.WriteFile(
      "shell.yaml", "entrypoint: [sh, -c, 'echo shell-as $(id -u):$(id -g); exec sleep 120']\n");
  auto started = cluster.RingAs("dana", dana, {"shell", "start", "-d", "--config-file", config});
  ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
  const std::string id = started.out.substr(0, started.out.find('\n'));
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return cluster.GetJson("/api/v1/shells/" + id)["state"] == "RUNNING"; },
                           std::chrono::seconds(30)));
  RawWebSocket terminal(PortOf(cluster.url()), "/api/v1/shells/" + id + "/terminal",
                        {{"Authorization", "Bearer " + dana}});
  ASSERT_EQ(terminal.status(), 101);
  std::string screen;
  const std::string expected = "shell-as " + std::to_string(owner.uid()) + ":" + std::to_string(owner.gid());
  for (int i = 0; i < 20 && screen.find(expected) == std::string::npos; ++i)
    if (auto frame = terminal.ReadFrame()) screen += *frame;
  EXPECT_NE(screen.find(expected), std::string::npos) << screen;
  ASSERT_EQ(cluster.Ring({"shell", "kill", id}).exit_code, 0);
}

}  // namespace
}  // namespace ring::testing::run_as_owner_e2e
