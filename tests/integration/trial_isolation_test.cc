// Trials against other users and against the agent, on a real master and
// real agents: a rank runs as its owner's account (here, with no linked
// account, the agent's unlinked_user) in a work folder of that account's
// (0700); it sees none of the agent's environment but the allow list; the
// processes it hides from its process group (setsid, double fork) end with
// it; and in single-user mode a trial of the agent's own account cannot read
// the agent's environment through /proc. Needs root (it makes accounts).
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/archive.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::trial_isolation {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr const char* kSecret = "s3cr3t-value-the-trial-must-not-see";

// A Unix account made for one test (useradd) and removed after it.
class TestAccount {
 public:
  explicit TestAccount(const std::string& tag) : name_("ringt_" + tag + "_" + std::to_string(::getpid())) {
    RunCommand({"userdel", "--force", name_});
    auto made = RunCommand({"useradd", "--system", "--no-create-home", "--user-group", "--shell",
                            "/usr/sbin/nologin", "--home-dir", "/nonexistent-" + name_, name_});
    EXPECT_EQ(made.exit_code, 0) << made.err;
    if (passwd* pw = ::getpwnam(name_.c_str())) {
      uid_ = pw->pw_uid;
      gid_ = pw->pw_gid;
      home_ = pw->pw_dir;
    }
  }
  ~TestAccount() { RunCommand({"userdel", "--force", name_}); }
  const std::string& name() const { return name_; }
  uid_t uid() const { return uid_; }
  gid_t gid() const { return gid_; }
  const std::string& home() const { return home_; }

 private:
  std::string name_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::string home_;
};

// Prints who it runs as, its folder, its environment and whether it can read
// the agent's environment, its token file ($AGENT_TOKEN_FILE) and its
// credential ($AGENT_CREDENTIAL); starts a process that leaves its process group (setsid) and
// one that is orphaned (double fork), prints their pids, then waits.
constexpr const char* kProbe = R"SH(echo "uid=$(id -u) gid=$(id -g)"
echo "folder=$(stat -c '%u %g %a' .)"
echo "model=$(stat -c '%u %g' run.sh)"
env | sed 's/^/env:/'
if cat /proc/$AGENT_PID/environ >/dev/null 2>&1; then echo "agent_environ=readable"; else echo "agent_environ=refused"; fi
if cat "$AGENT_TOKEN_FILE" >/dev/null 2>&1; then echo "agent_token=readable"; else echo "agent_token=refused"; fi
if cat "$AGENT_CREDENTIAL" >/dev/null 2>&1; then echo "agent_credential=readable"; else echo "agent_credential=refused"; fi
grep -E '^Cap(Prm|Eff|Amb)' /proc/self/status | tr -d '\t' | tr ':' '='
mkdir -p left/deep && echo x > left/deep/file && chmod 500 left/deep left
setsid sh -c 'echo "escaped=$$"; exec sleep 300' &
(sh -c 'echo "orphan=$$"; exec sleep 300' &)
sleep 1
echo ready
exec sleep 300
)SH";

class TrialIsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the test makes Unix accounts and runs trials as them";
    // Accounts other than root's must be able to reach their work folders.
    ::chmod(cluster_.dir().c_str(), 0711);
    cluster_.StartMaster();
  }
  void TearDown() override {
    if (HasFailure()) cluster_.DumpLogs();
  }

  // Submits the probe; its trial gets AGENT_PID and `variables` (the agent's
  // files it tries to read) in its environment.
  int64_t SubmitProbe(pid_t agent_pid, const std::map<std::string, std::string>& variables = {}) {
    auto model =
        PackDirectory(cluster_.MakeModelDir("probe" + std::to_string(++models_), {{"run.sh", kProbe}}));
    EXPECT_TRUE(model.ok());
    std::string config =
        "name: probe\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n"
        "  max_length:\n    batches: 1\nmax_restarts: 0\nenvironment:\n  variables:\n"
        "    AGENT_PID: \"" +
        std::to_string(agent_pid) + "\"\n";
    for (const auto& [name, value] : variables) config += "    " + name + ": \"" + value + "\"\n";
    int status = 0;
    auto created = cluster_.PostJson(
        "/api/v1/experiments", {{"config", config}, {"model_definition", Base64Encode(*model)}}, &status);
    EXPECT_EQ(status, 201) << created.dump();
    return created.value("id", int64_t{0});
  }

  // The probe's output once it printed "ready": name=value lines as a map,
  // env: lines in `env`.
  std::map<std::string, std::string> WaitForProbe(int64_t experiment, std::vector<std::string>& env) {
    std::map<std::string, std::string> out;
    bool ready = TestCluster::WaitFor(
        [&] {
          auto trials = cluster_.GetJson("/api/v1/experiments/" + std::to_string(experiment) + "/trials");
          if (!trials.contains("trials") || trials["trials"].empty()) return false;
          const auto trial = trials["trials"][0].value("id", int64_t{0});
          auto logs = cluster_.GetJson("/api/v1/trials/" + std::to_string(trial) + "/logs?limit=1000");
          out.clear();
          env.clear();
          bool seen = false;
          for (const auto& line : logs.value("logs", nlohmann::json::array())) {
            const std::string text = line.value("line", "");
            if (text == "ready") seen = true;
            if (text.rfind("env:", 0) == 0) {
              env.push_back(text.substr(4));
              continue;
            }
            auto eq = text.find('=');
            if (eq != std::string::npos) out[text.substr(0, eq)] = text.substr(eq + 1);
          }
          return seen;
        },
        60s);
    EXPECT_TRUE(ready) << "the probe trial did not print ready";
    return out;
  }

  static bool Alive(const std::string& pid) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string text;
    std::getline(stat, text);
    if (text.empty()) return false;
    auto close = text.rfind(')');
    return close == std::string::npos || text.substr(close + 2, 1) != "Z";  // a zombie has ended
  }

  static std::string OwnerOfProcess(const std::string& pid) {
    struct stat st {};
    if (::stat(("/proc/" + pid).c_str(), &st) != 0) return "";
    return std::to_string(st.st_uid);
  }

  TestCluster cluster_;
  int models_ = 0;
};

TEST_F(TrialIsolationTest, RankRunsAsItsAccountInItsOwnFolderSeesNoSecretAndTakesEveryProcessWithIt) {
  TestAccount unlinked("unl");
  ASSERT_NE(unlinked.uid(), 0u);
  TestCluster::AgentOptions options;
  options.run_as_owner = true;
  options.extra_args = {"--unlinked-user", unlinked.name()};
  // RING_AGENT_TOKEN itself cannot be given beside --token-file; its file's
  // name stands in for it.
  options.env = {{"SECRET_X", kSecret},
                 {"RING_SECRET_Y", kSecret},
                 {"AWS_SECRET_ACCESS_KEY", kSecret},
                 {"RING_AGENT_TOKEN_FILE", cluster_.cluster_token_file()}};
  // Its token file as an operator keeps it (0400, the agent's account's) in a
  // folder every account may pass through: only the trial's account keeps
  // the trial out, not a folder on the way.
  const std::string token = cluster_.dir() + "/owner-agent-token";
  fs::copy_file(cluster_.cluster_token_file(), token);
  ASSERT_EQ(::chmod(token.c_str(), 0400), 0);
  options.token_file = token;
  auto& agent = cluster_.StartAgent("owner-agent", 2, options);
  EXPECT_NE(ReadFileText(agent.log_path()).find("runs each task as its owner's Unix account"),
            std::string::npos);
  // The credential the master issued at enrolment, in the agent's state folder.
  const std::string credential = cluster_.agent_state_dir("owner-agent") + "/credential";
  ASSERT_TRUE(fs::exists(credential)) << "the probe must try a file that exists";

  const int64_t experiment =
      SubmitProbe(agent.pid(), {{"AGENT_TOKEN_FILE", token}, {"AGENT_CREDENTIAL", credential}});
  std::vector<std::string> env;
  auto probe = WaitForProbe(experiment, env);

  // Its account: the master sent no linked account, so the unlinked_user.
  const std::string uid = std::to_string(unlinked.uid());
  const std::string gid = std::to_string(unlinked.gid());
  EXPECT_EQ(probe["uid"], uid + " gid=" + gid);
  EXPECT_EQ(probe["folder"], uid + " " + gid + " 700") << "the work folder is the account's, 0700";
  EXPECT_EQ(probe["model"], uid + " " + gid) << "the model definition was handed to the account";

  // Its environment: the allow list, the account's HOME/USER, the platform's variables.
  std::map<std::string, std::string> vars;
  for (const auto& entry : env) {
    EXPECT_EQ(entry.find(kSecret), std::string::npos) << "a secret of the agent reached the trial: " << entry;
    auto eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  EXPECT_FALSE(vars.contains("SECRET_X"));
  EXPECT_FALSE(vars.contains("RING_SECRET_Y"));
  EXPECT_FALSE(vars.contains("AWS_SECRET_ACCESS_KEY"));
  EXPECT_FALSE(vars.contains("RING_AGENT_TOKEN_FILE"));
  EXPECT_EQ(vars["USER"], unlinked.name());
  EXPECT_EQ(vars["LOGNAME"], unlinked.name());
  EXPECT_EQ(vars["HOME"], unlinked.home());
  EXPECT_TRUE(vars.contains("PATH"));
  EXPECT_TRUE(vars.contains("RING_ALLOCATION_TOKEN"));
  EXPECT_EQ(vars["AGENT_PID"], std::to_string(agent.pid()));
  EXPECT_EQ(probe["agent_environ"], "refused");
  EXPECT_EQ(probe["agent_token"], "refused") << "the trial read the agent's token file " << token;
  EXPECT_EQ(probe["agent_credential"], "refused") << "the trial read the agent's credential " << credential;
  for (const auto* caps : {"CapPrm", "CapEff", "CapAmb"}) EXPECT_EQ(probe[caps], "0000000000000000") << caps;

  // The processes that left the process group run as the account too...
  const std::string escaped = probe["escaped"];
  const std::string orphan = probe["orphan"];
  ASSERT_FALSE(escaped.empty());
  ASSERT_FALSE(orphan.empty());
  ASSERT_TRUE(Alive(escaped)) << "the setsid process should run until the trial ends";
  ASSERT_TRUE(Alive(orphan)) << "the double-forked process should run until the trial ends";
  EXPECT_EQ(OwnerOfProcess(escaped), uid);

  // ...and end with the trial when it is killed.
  int status = 0;
  cluster_.PostJson("/api/v1/experiments/" + std::to_string(experiment) + "/kill", nlohmann::json::object(),
                    &status);
  EXPECT_EQ(status, 200);
  EXPECT_TRUE(TestCluster::WaitFor([&] { return !Alive(escaped) && !Alive(orphan); }, 20s))
      << "a process that left the trial's process group outlived the trial (escaped " << escaped << ": "
      << Alive(escaped) << ", orphan " << orphan << ": " << Alive(orphan) << ")";
  // The work folder and the cgroup are cleaned up.
  EXPECT_TRUE(TestCluster::WaitFor([&] { return fs::is_empty(cluster_.dir() + "/agent-owner-agent"); }, 20s));
  // Where the agent put its cgroups, as its log says (none: process groups only).
  const std::string log = ReadFileText(agent.log_path());
  const std::string marker = " cgroup below ";
  const auto at = log.find(marker);
  if (at != std::string::npos) {
    const std::string cgroups = log.substr(at + marker.size(), log.find('\n', at) - at - marker.size());
    EXPECT_NE(cgroups.find("/ringagent-owner-agent." + std::to_string(agent.pid())), std::string::npos)
        << cgroups;
    EXPECT_TRUE(TestCluster::WaitFor(
        [&] {
          for (const auto& entry : fs::directory_iterator(cgroups))
            if (entry.is_directory()) return false;
          return true;
        },
        20s))
        << "the trial's cgroup was not removed";
  }
}

TEST_F(TrialIsolationTest, AnAgentWithOnlyTheSystemdUnitsCapabilitiesRunsTasksAsTheirOwners) {
  // As deploy/systemd/ringagent.service.in runs it: an ordinary account with
  // CAP_SETUID, CAP_SETGID, CAP_KILL, CAP_CHOWN and CAP_DAC_OVERRIDE ambient.
  TestAccount service("svc");
  TestAccount unlinked("un2");
  ASSERT_NE(service.uid(), 0u);
  const std::string work = cluster_.dir() + "/agent-capable";
  fs::create_directories(work);
  ASSERT_EQ(::chown(work.c_str(), service.uid(), service.gid()), 0);
  ::chmod(work.c_str(), 0711);
  const std::string token = cluster_.dir() + "/capable-token";
  fs::copy_file(cluster_.cluster_token_file(), token);
  ASSERT_EQ(::chown(token.c_str(), service.uid(), service.gid()), 0);
  ::chmod(token.c_str(), 0400);
  // Delegate=yes: the agent starts in a cgroup of its own that its account owns.
  const std::string delegated = "/sys/fs/cgroup/unified/ringt-delegated-" + std::to_string(::getpid());
  const bool can_delegate =
      fs::exists("/sys/fs/cgroup/unified/cgroup.procs") && ::mkdir(delegated.c_str(), 0755) == 0;
  if (can_delegate) {
    for (const char* file : {"", "/cgroup.procs", "/cgroup.threads", "/cgroup.subtree_control"})
      EXPECT_EQ(::chown((delegated + file).c_str(), service.uid(), service.gid()), 0) << file;
  }
  const std::string caps = "+setuid,+setgid,+kill,+chown,+dac_override";
  TestCluster::AgentOptions options;
  if (can_delegate)
    options.launcher = {"sh", "-c", "echo $$ > " + delegated + "/cgroup.procs && exec \"$0\" \"$@\""};
  options.launcher.insert(
      options.launcher.end(),
      {"setpriv", "--reuid=" + std::to_string(service.uid()), "--regid=" + std::to_string(service.gid()),
       "--clear-groups", "--inh-caps=" + caps, "--ambient-caps=" + caps, "--"});
  options.run_as_owner = true;
  options.token_file = token;
  options.work_dir = work;
  options.extra_args = {"--unlinked-user", unlinked.name()};
  auto& agent = cluster_.StartAgent("capable", 1, options);
  EXPECT_NE(ReadFileText(agent.log_path()).find("runs each task as its owner's Unix account"),
            std::string::npos)
      << "CAP_SETUID and CAP_SETGID must be enough to switch users";

  const int64_t experiment = SubmitProbe(agent.pid());
  std::vector<std::string> env;
  auto probe = WaitForProbe(experiment, env);
  const std::string uid = std::to_string(unlinked.uid());
  const std::string gid = std::to_string(unlinked.gid());
  EXPECT_EQ(probe["uid"], uid + " gid=" + gid);
  EXPECT_EQ(probe["folder"], uid + " " + gid + " 700");
  EXPECT_EQ(probe["model"], uid + " " + gid) << "CAP_CHOWN hands the model definition over";
  for (const auto* cap : {"CapPrm", "CapEff", "CapAmb"})
    EXPECT_EQ(probe[cap], "0000000000000000") << cap << ": the agent's capabilities reached the trial";

  int status = 0;
  cluster_.PostJson("/api/v1/experiments/" + std::to_string(experiment) + "/kill", nlohmann::json::object(),
                    &status);
  EXPECT_EQ(status, 200);
  // CAP_KILL ends the account's processes; in the delegated cgroup, all of them.
  if (can_delegate) {
    EXPECT_NE(ReadFileText(agent.log_path()).find("cgroup2 cgroup below " + delegated), std::string::npos);
    EXPECT_TRUE(
        TestCluster::WaitFor([&] { return !Alive(probe["escaped"]) && !Alive(probe["orphan"]); }, 20s))
        << "a process that left the trial's process group outlived it under a delegated cgroup";
  }
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        auto trials = cluster_.GetJson("/api/v1/experiments/" + std::to_string(experiment) + "/trials");
        return trials.contains("trials") && !trials["trials"].empty() &&
               trials["trials"][0].value("state", "") == "CANCELED";
      },
      30s));
  // CAP_DAC_OVERRIDE removes what the trial left in its 0700 folder, read-only folders included.
  EXPECT_TRUE(TestCluster::WaitFor([&] { return fs::is_empty(work); }, 20s))
      << "the trial's work folder was not removed";
  for (const auto* key : {"escaped", "orphan"})
    if (!probe[key].empty()) ::kill(std::stoi(probe[key]), SIGKILL);
  if (can_delegate) {
    agent.Stop();
    for (const auto& entry : fs::directory_iterator(delegated))
      if (entry.is_directory()) ::rmdir(entry.path().c_str());
    EXPECT_EQ(::rmdir(delegated.c_str()), 0) << "the agent left cgroups behind: " << std::strerror(errno);
  }
}

TEST_F(TrialIsolationTest, AnUnlinkedUserThatIsRootOrTheAgentIsRefusedAtStart) {
  for (const std::string& account : {std::string("root")}) {
    auto run =
        RunCommand({BinDir() + "/ringagent", "--master", cluster_.url(), "--id", "refusing", "--state-dir",
                    cluster_.dir() + "/refusing-state", "--work-dir", cluster_.dir() + "/refusing",
                    "--token-file", cluster_.cluster_token_file(), "--unlinked-user", account},
                   {}, 20s);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find("unlinked_user \"root\" is root"), std::string::npos) << run.err;
  }
  auto missing =
      RunCommand({BinDir() + "/ringagent", "--master", cluster_.url(), "--id", "refusing", "--state-dir",
                  cluster_.dir() + "/refusing-state", "--work-dir", cluster_.dir() + "/refusing",
                  "--token-file", cluster_.cluster_token_file(), "--unlinked-user", "ringt-no-such-account"},
                 {}, 20s);
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("is not an account on this host"), std::string::npos) << missing.err;
  // A work folder others may write to is refused, naming it.
  const std::string open = cluster_.dir() + "/open-work";
  fs::create_directories(open);
  ::chmod(open.c_str(), 0777);
  auto writable = RunCommand(
      {BinDir() + "/ringagent", "--master", cluster_.url(), "--id", "refusing", "--state-dir",
       cluster_.dir() + "/refusing-state", "--work-dir", open, "--token-file", cluster_.cluster_token_file()},
      {}, 20s);
  EXPECT_EQ(writable.exit_code, 2) << writable.err;
  EXPECT_NE(writable.err.find("--work-dir " + open + " is writable by its group or by others"),
            std::string::npos)
      << writable.err;
}

TEST_F(TrialIsolationTest, InSingleUserModeATrialOfTheAgentsAccountCannotReadTheAgentsEnvironment) {
  // The agent runs as an ordinary account, so its trials run as that account
  // too: only the agent's being non-dumpable keeps /proc/<agent>/environ shut.
  TestAccount runner("agt");
  ASSERT_NE(runner.uid(), 0u);
  const std::string work = cluster_.dir() + "/agent-solo";
  fs::create_directories(work);
  ASSERT_EQ(::chown(work.c_str(), runner.uid(), runner.gid()), 0);
  ::chmod(work.c_str(), 0700);
  const std::string token = cluster_.dir() + "/solo-token";
  fs::copy_file(cluster_.cluster_token_file(), token);
  ASSERT_EQ(::chown(token.c_str(), runner.uid(), runner.gid()), 0);
  ::chmod(token.c_str(), 0400);
  TestCluster::AgentOptions options;
  options.launcher = {"setpriv", "--reuid=" + std::to_string(runner.uid()),
                      "--regid=" + std::to_string(runner.gid()), "--clear-groups", "--"};
  // Its state folder (the credential the master issues it) is its own too.
  const std::string state = cluster_.dir() + "/agent-solo-state";
  fs::create_directories(state);
  ASSERT_EQ(::chown(state.c_str(), runner.uid(), runner.gid()), 0);
  ::chmod(state.c_str(), 0700);
  options.token_file = token;
  options.work_dir = work;
  options.state_dir = state;
  options.env = {{"SECRET_X", kSecret}};
  auto& agent = cluster_.StartAgent("solo", 1, options);
  EXPECT_NE(ReadFileText(agent.log_path()).find("single-user mode"), std::string::npos);

  // setpriv execs the agent, so the pid is the agent's.
  std::vector<std::string> env;
  auto probe = WaitForProbe(SubmitProbe(agent.pid()), env);
  EXPECT_EQ(probe["uid"], std::to_string(runner.uid()) + " gid=" + std::to_string(runner.gid()));
  EXPECT_EQ(OwnerOfProcess(std::to_string(agent.pid()) + "/environ"), "0")
      << "a non-dumpable process's /proc files belong to root";
  EXPECT_EQ(probe["agent_environ"], "refused") << "a trial of the agent's own account read its environment";
  for (const auto& entry : env) EXPECT_EQ(entry.find(kSecret), std::string::npos) << entry;
  // Without the rights to make cgroups the agent has process groups only:
  // end what the probe hid from them.
  for (const auto& key : {"escaped", "orphan"})
    if (!probe[key].empty()) ::kill(std::stoi(probe[key]), SIGKILL);
}

}  // namespace
}  // namespace ring::testing::trial_isolation
