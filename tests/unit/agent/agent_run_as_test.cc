// Who a task runs as, what it sees of the agent's environment, the work
// folder's checks, and containment: the launcher with each cgroup kind this
// host offers ends processes that left the process group.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "agent/posix_process_launcher.h"
#include "agent/process_containment.h"
#include "agent/run_as.h"
#include "agent/trial_environment.h"
#include "agent/work_folder.h"

namespace ring::agent_run_as_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(AgentTrialEnvironmentTest, OnlyTheAllowListOfTheAgentsEnvironmentPasses) {
  Environment agent = {{"PATH", "/opt/bin:/usr/bin"},
                       {"LANG", "C.UTF-8"},
                       {"LC_ALL", "C"},
                       {"TZ", "UTC"},
                       {"RING_AGENT_TOKEN", "cluster-secret"},
                       {"RING_AGENT_TOKEN_FILE", "/etc/ringmaster/cluster-token"},
                       {"AWS_SECRET_ACCESS_KEY", "x"},
                       {"HOME", "/root"},
                       {"LD_PRELOAD", "/tmp/evil.so"}};
  Environment allowed = AllowedAgentEnvironment(agent);
  EXPECT_EQ(
      allowed,
      (Environment{{"PATH", "/opt/bin:/usr/bin"}, {"LANG", "C.UTF-8"}, {"LC_ALL", "C"}, {"TZ", "UTC"}}));
  EXPECT_EQ(AllowedAgentEnvironment({})["PATH"], "/usr/local/bin:/usr/bin:/bin");
}

TEST(AgentRunAsTest, SingleUserRunsAsTheAgentAndSwitchingRunsAsTheStartsAccount) {
  RunAsPolicy single;
  single.agent.uid = 1234;
  single.agent.user = "me";
  proto::Start start;
  start.run_as = proto::RunAs{0, 0, "root", "root"};
  auto self = AccountFor(single, start);
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(self->uid, 1234u) << "single-user mode ignores run_as";

  RunAsPolicy policy;
  policy.switch_users = true;
  policy.unlinked.uid = 65534;
  policy.unlinked.user = "nobody";
  start.run_as.reset();
  EXPECT_EQ(AccountFor(policy, start)->uid, 65534u) << "no linked account: unlinked_user";
  start.run_as = proto::RunAs{4321, 4322, "ringt-not-on-this-host", ""};
  auto linked = AccountFor(policy, start);
  ASSERT_TRUE(linked.ok());
  EXPECT_EQ(linked->uid, 4321u);
  EXPECT_EQ(linked->gid, 4322u);
  EXPECT_EQ(linked->groups, std::vector<uint32_t>{4322}) << "a name unknown here: only its own group";
  EXPECT_EQ(linked->user, "ringt-not-on-this-host");
  EXPECT_EQ(linked->home, "/");
}

TEST(AgentRunAsTest, RootIsRefusedUnlessAllowed) {
  RunAsPolicy policy;
  policy.switch_users = true;
  proto::Start start;
  for (auto ids : {std::pair<int64_t, int64_t>{0, 0}, {0, 100}, {100, 0}}) {
    start.run_as = proto::RunAs{ids.first, ids.second, "", ""};
    auto refused = AccountFor(policy, start);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied);
    EXPECT_NE(refused.status().message().find("allow_root_trials"), std::string::npos);
  }
  policy.allow_root = true;
  start.run_as = proto::RunAs{0, 0, "root", "root"};
  EXPECT_TRUE(AccountFor(policy, start).ok());
}

class AgentWorkFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ring-work-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(AgentWorkFolderTest, TheRootIsMade0711AndOneOthersMayWriteIsRefused) {
  const std::string root = dir_ + "/a/work";
  ASSERT_TRUE(PrepareWorkRoot(root, false).ok());
  struct stat st {};
  ASSERT_EQ(::stat(root.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0711u);
  ::chmod(root.c_str(), 0775);
  auto group = PrepareWorkRoot(root, false);
  EXPECT_FALSE(group.ok());
  EXPECT_NE(group.message().find("writable by its group or by others (mode 0775)"), std::string::npos)
      << group.message();
  ::chmod(root.c_str(), 0711);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(root.c_str(), 65534, 65534), 0);
    auto other = PrepareWorkRoot(root, false);
    EXPECT_FALSE(other.ok());
    EXPECT_NE(other.message().find("belongs to uid 65534"), std::string::npos) << other.message();
  }
}

TEST_F(AgentWorkFolderTest, RunAsOwnerNeedsFoldersOthersCanPass) {
  ::chmod(dir_.c_str(), 0700);
  auto closed = PrepareWorkRoot(dir_ + "/work", true);
  EXPECT_FALSE(closed.ok());
  EXPECT_NE(closed.message().find(dir_ + " has mode 0700"), std::string::npos) << closed.message();
  ::chmod(dir_.c_str(), 0711);
  EXPECT_TRUE(PrepareWorkRoot(dir_ + "/work", true).ok());
}

TEST_F(AgentWorkFolderTest, ChownAndRemoveNeverFollowLinks) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files away";
  const std::string outside = dir_ + "/outside";
  fs::create_directories(outside);
  std::ofstream(outside + "/keep") << "x";
  const std::string work = dir_ + "/alloc.r0";
  ASSERT_TRUE(MakeWorkDir(work).ok());
  fs::create_directories(work + "/sub");
  std::ofstream(work + "/sub/file") << "y";
  fs::create_directory_symlink(outside, work + "/link");
  ASSERT_TRUE(ChownTree(work, 65534, 65534).ok());
  struct stat st {};
  ASSERT_EQ(::stat((work + "/sub/file").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  ASSERT_EQ(::stat(work.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat((outside + "/keep").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "chown followed a link out of the work folder";
  ASSERT_TRUE(RemoveTree(work).ok());
  EXPECT_FALSE(fs::exists(work));
  EXPECT_TRUE(fs::exists(outside + "/keep")) << "removal followed a link out of the work folder";
}

// Output and exit of one launched process.
struct OutputRecorder {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::atomic<bool> exited{false};
  ProcessCallbacks Callbacks() {
    return {[this](OutputStream, std::string line) {
              std::lock_guard lock(mutex);
              lines.push_back(std::move(line));
            },
            [this](ExitStatus) { exited = true; }};
  }
  std::string Value(const std::string& key) {
    std::lock_guard lock(mutex);
    for (const auto& l : lines)
      if (l.rfind(key + "=", 0) == 0) return l.substr(key.size() + 1);
    return "";
  }
};

bool Alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  auto close = text.rfind(')');
  return !text.empty() && (close == std::string::npos || text.substr(close + 2, 1) != "Z");
}

template <typename F>
bool WaitFor(F done, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return done();
}

class AgentContainmentTest : public ::testing::TestWithParam<ContainmentKind> {};

TEST_P(AgentContainmentTest, EveryProcessEndsWithTheTaskEvenAfterSetsidAndDoubleFork) {
  std::string why;
  const std::string id = "unit-" + std::to_string(::getpid());
  auto containment = ProcessContainment::Detect(id, {GetParam()}, why);
  if (containment.kind() != GetParam()) GTEST_SKIP() << ToString(GetParam()) << " is not available: " << why;
  const std::string root = containment.root();
  OutputRecorder rec;
  int escaped = 0;
  int orphan = 0;
  {
    PosixProcessLauncher launcher(containment);
    ProcessSpec spec{ShellCommand("setsid sh -c 'echo escaped=$$; exec sleep 300' & "
                                  "(sh -c 'echo orphan=$$; exec sleep 300' &); exec sleep 300"),
                     "",
                     {"PATH=/usr/bin:/bin"}};
    spec.group = "alloc-1.r0";
    auto handle = launcher.Launch(spec, rec.Callbacks());
    ASSERT_TRUE(handle.ok()) << handle.status().ToString();
    ASSERT_TRUE(WaitFor([&] { return !rec.Value("escaped").empty() && !rec.Value("orphan").empty(); }, 10s));
    escaped = std::stoi(rec.Value("escaped"));
    orphan = std::stoi(rec.Value("orphan"));
    ASSERT_TRUE(Alive(escaped));
    ASSERT_TRUE(Alive(orphan));
    EXPECT_GE(containment.Pids("alloc-1.r0").size(), 3u);
    launcher.Terminate(handle->pid, 0ms);
    ASSERT_TRUE(WaitFor([&] { return rec.exited.load(); }, 10s));
    EXPECT_FALSE(Alive(escaped)) << "the setsid process outlived its task";
    EXPECT_FALSE(Alive(orphan)) << "the double-forked process outlived its task";
    EXPECT_TRUE(WaitFor([&] { return !fs::exists(root + "/alloc-1.r0"); }, 5s))
        << "the task's cgroup was not removed";
  }
  EXPECT_FALSE(fs::exists(root)) << "the agent's cgroup folder was not removed when the launcher went";
  if (Alive(escaped)) ::kill(escaped, SIGKILL);
  if (Alive(orphan)) ::kill(orphan, SIGKILL);
}

INSTANTIATE_TEST_SUITE_P(Kinds, AgentContainmentTest,
                         ::testing::Values(ContainmentKind::kCgroup2, ContainmentKind::kFreezer),
                         [](const auto& info) { return std::string(ToString(info.param)); });

TEST(AgentSwitchUserTest, AChildSwitchedToAnAccountRunsAsItAndCannotBecomeRootAgain) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  PosixProcessLauncher launcher;
  OutputRecorder rec;
  // setpriv is the only widely installed tool that tries setuid(0) without a
  // password; its failure shows the saved uid is gone too.
  ProcessSpec spec{ShellCommand("echo ids=$(id -u):$(id -g):$(id -G); "
                                "if setpriv --reuid=0 true 2>/dev/null; then echo root=regained; "
                                "else echo root=refused; fi; grep CapEff /proc/self/status"),
                   "",
                   {"PATH=/usr/bin:/bin:/usr/sbin:/sbin"}};
  spec.run_as = SwitchIds{65534, 65534, {65534}};
  auto handle = launcher.Launch(spec, rec.Callbacks());
  ASSERT_TRUE(handle.ok()) << handle.status().ToString();
  ASSERT_TRUE(WaitFor([&] { return rec.exited.load(); }, 10s));
  EXPECT_EQ(rec.Value("ids"), "65534:65534:65534");
  EXPECT_EQ(rec.Value("root"), "refused");
  std::lock_guard lock(rec.mutex);
  bool no_caps = false;
  for (const auto& l : rec.lines)
    if (l.find("CapEff:") == 0) no_caps = l.find("0000000000000000") != std::string::npos;
  EXPECT_TRUE(no_caps) << "the trial kept capabilities";
}

TEST(AgentSwitchUserTest, ACwdTheAccountCannotEnterIsACleanLaunchError) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  std::string tmpl = (fs::temp_directory_path() / "ring-closed-XXXXXX").string();
  const std::string closed = ::mkdtemp(tmpl.data());
  ::chmod(closed.c_str(), 0700);
  PosixProcessLauncher launcher;
  OutputRecorder rec;
  ProcessSpec spec{ShellCommand("true"), closed, {}};
  spec.run_as = SwitchIds{65534, 65534, {65534}};
  auto handle = launcher.Launch(spec, rec.Callbacks());
  ASSERT_FALSE(handle.ok());
  EXPECT_NE(handle.status().message().find("cannot enter its working directory: Permission denied"),
            std::string::npos)
      << handle.status().message();
  fs::remove_all(closed);
}

}  // namespace
}  // namespace ring::agent_run_as_test
