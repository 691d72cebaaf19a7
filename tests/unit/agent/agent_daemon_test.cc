// The ringagent binary against the in-test fake master: model download,
// a real trial process, reconnect with running processes, and SIGTERM.
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/unit/agent/agent_test_master.h"

extern char** environ;

namespace ring {
namespace {

using namespace std::chrono_literals;
using agent_test::TestMaster;
using agent_test::WaitUntil;
namespace fs = std::filesystem;
using PS = proto::ProcessState;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One ringagent process; SIGKILLed by the destructor if still running.
class AgentProcess {
 public:
  AgentProcess(std::vector<std::string> args, const fs::path& log) {
    const char* bin_dir = std::getenv("RING_BIN_DIR");
    std::string binary = std::string(bin_dir ? bin_dir : ".") + "/ringagent";
    args.insert(args.begin(), binary);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      std::cerr << "cannot start " << binary << ": " << std::strerror(rc) << "\n";
      pid_ = 0;
    }
  }
  ~AgentProcess() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  void Signal(int signal) { ::kill(pid_, signal); }
  // The wait status once the process ended within `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!status_ && std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_)
        status_ = status;
      else
        std::this_thread::sleep_for(10ms);
    }
    return status_;
  }

 private:
  pid_t pid_ = 0;
  std::optional<int> status_;
};

class AgentDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ring-agent-daemon-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "ringagent log:\n" << ReadFile(dir_ / "agent.log");
    agent_.reset();
    fs::remove_all(dir_);
  }

  // `extra` empty: single-user mode; otherwise these flags instead.
  void StartAgent(std::vector<std::string> extra = {"--single-user"}) {
    // Enrolled already: the fake master knows this credential.
    fs::create_directories(dir_ / "state");
    fs::permissions(dir_ / "state", fs::perms::owner_all, fs::perm_options::replace);
    {
      std::ofstream(dir_ / "state" / "credential")
          << R"({"agent_id":"daemon-1","credential":"cluster-token"})";
    }
    fs::permissions(dir_ / "state" / "credential", fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
    std::vector<std::string> args{"--master",
                                  master_.url(),
                                  "--id",
                                  "daemon-1",
                                  "--cpu-slots",
                                  "2",
                                  "--work-dir",
                                  (dir_ / "work").string(),
                                  "--state-dir",
                                  (dir_ / "state").string(),
                                  "--log-level",
                                  "debug",
                                  "--shutdown-grace-ms",
                                  "1000",
                                  "--no-gpus"};
    args.insert(args.end(), extra.begin(), extra.end());
    agent_ = std::make_unique<AgentProcess>(args, dir_ / "agent.log");
    ASSERT_TRUE(agent_->started());
  }

  // Packs dir_/model with the system tar and serves it for allocation `id`.
  void ServeModel(const std::string& id, const std::string& token) {
    std::string cmd = "tar czf " + (dir_ / "model.tgz").string() + " -C " + (dir_ / "model").string() + " .";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    master_.ServeBody(ModelPath(id), token, ReadFile(dir_ / "model.tgz"));
  }
  static std::string ModelPath(const std::string& id) {
    return "/api/v1/allocations/" + id + "/model_definition";
  }

  static proto::Start MakeStart(const std::string& id, const std::string& entrypoint) {
    proto::Start s;
    s.allocation_id = id;
    s.allocation_token = "tok-" + id;
    s.trial_id = 1;
    s.experiment_id = 1;
    s.slot_ids = {0};
    s.slot_type = "cpu";
    s.entrypoint = entrypoint;
    s.model_definition_path = ModelPath(id);
    return s;
  }

  std::vector<proto::StateChange> States(const std::string& id) {
    std::vector<proto::StateChange> out;
    for (const auto& s : master_.Received<proto::StateChange>())
      if (s.allocation_id == id) out.push_back(s);
    return out;
  }
  bool Exited(const std::string& id) {
    for (const auto& s : States(id))
      if (s.state == PS::kExited) return true;
    return false;
  }
  std::vector<std::string> LogLines(const std::string& id) {
    std::vector<std::string> out;
    for (const auto& b : master_.Received<proto::LogBatch>())
      if (b.allocation_id == id)
        for (const auto& l : b.lines) out.push_back(l.line);
    return out;
  }

  fs::path dir_;
  TestMaster master_;
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(AgentDaemonTest, RunsATrialFromItsModelDefinitionAndStopsCleanlyOnSigterm) {
  std::ofstream(dir_ / "model" / "run.sh")
      << "echo from-model\necho \"$RING_ALLOCATION_ID $RANK $WORLD_SIZE\"\n";
  ServeModel("a1", "tok-a1");
  StartAgent();
  ASSERT_TRUE(
      WaitUntil([&] { return master_.connections() == 1 && !master_.Received<proto::Hello>().empty(); }));
  auto hello = master_.Received<proto::Hello>()[0];
  EXPECT_EQ(hello.agent_id, "daemon-1");
  EXPECT_EQ(hello.address, "127.0.0.1");
  EXPECT_FALSE(hello.version.empty());
  ASSERT_EQ(hello.slots.size(), 2u);
  EXPECT_EQ(hello.slots[1].type, "cpu");
  EXPECT_FALSE(hello.runs_as_owner) << "--single-user: tasks run as the agent, and hello says so";
  EXPECT_EQ(master_.authorization(), "Bearer cluster-token");

  master_.Push(MakeStart("a1", "sh run.sh; echo ready; exec sleep 30"));
  ASSERT_TRUE(WaitUntil([&] { return LogLines("a1").size() >= 3; }));
  EXPECT_EQ(LogLines("a1"), (std::vector<std::string>{"from-model", "a1 0 1", "ready"}));
  EXPECT_TRUE(fs::exists(dir_ / "work" / "a1.r0" / "run.sh"));

  agent_->Signal(SIGTERM);
  auto status = agent_->Wait(8s);
  ASSERT_TRUE(status.has_value()) << "ringagent did not exit after SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0);
  auto states = States("a1");
  ASSERT_EQ(states.size(), 3u);
  EXPECT_EQ(states[0].state, PS::kStarting);
  EXPECT_EQ(states[1].state, PS::kRunning);
  EXPECT_EQ(states[2].state, PS::kExited);
  EXPECT_EQ(states[2].signal, SIGTERM);
  EXPECT_TRUE(master_.close_frame_seen());
  EXPECT_FALSE(fs::exists(dir_ / "work" / "a1.r0"));
}

TEST_F(AgentDaemonTest, RunsEachTaskAsTheAccountItsStartNamesAndRefusesRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: makes an account and switches to it";
  const std::string name = "ringt_link_" + std::to_string(::getpid());
  std::system(("userdel --force " + name +
               " 2>/dev/null; useradd --system --no-create-home --user-group --shell "
               "/usr/sbin/nologin " +
               name)
                  .c_str());
  struct Cleanup {
    std::string name;
    ~Cleanup() { std::system(("userdel --force " + name + " 2>/dev/null").c_str()); }
  } cleanup{name};
  passwd* pw = ::getpwnam(name.c_str());
  ASSERT_NE(pw, nullptr);
  const uid_t uid = pw->pw_uid;
  const gid_t gid = pw->pw_gid;
  std::ofstream(dir_ / "model" / "run.sh")
      << "echo \"ids=$(id -u):$(id -g) folder=$(stat -c '%u:%g:%a' .)\"\n";
  ServeModel("linked", "tok-linked");
  ServeModel("root", "tok-root");
  StartAgent({});
  ASSERT_TRUE(
      WaitUntil([&] { return master_.connections() == 1 && !master_.Received<proto::Hello>().empty(); }));
  EXPECT_TRUE(master_.Received<proto::Hello>()[0].runs_as_owner);

  // A linked owner: the rank runs as the account, in a 0700 folder of its own.
  auto linked = MakeStart("linked", "sh run.sh");
  linked.owner = "ada";
  linked.run_as = proto::RunAs{uid, gid, name, name};
  master_.Push(linked);
  ASSERT_TRUE(WaitUntil([&] { return Exited("linked"); }));
  const std::string ids = std::to_string(uid) + ":" + std::to_string(gid);
  EXPECT_EQ(LogLines("linked"), (std::vector<std::string>{"ids=" + ids + " folder=" + ids + ":700"}));
  EXPECT_EQ(States("linked").back().exit_code, 0);

  // An owner linked to root: refused, nothing runs.
  auto root = MakeStart("root", "sh run.sh");
  root.owner = "eve";
  root.run_as = proto::RunAs{0, 0, "root", "root"};
  master_.Push(root);
  ASSERT_TRUE(WaitUntil([&] { return Exited("root"); }));
  auto states = States("root");
  EXPECT_EQ(states.back().exit_code, 1);
  EXPECT_NE(states.back().message.find("refused to run as root"), std::string::npos) << states.back().message;
  EXPECT_TRUE(LogLines("root").empty());
}

TEST_F(AgentDaemonTest, RefusedDownloadEndsTheAllocationWithAMessage) {
  ServeModel("a2", "another-token");
  StartAgent();
  ASSERT_TRUE(WaitUntil([&] { return master_.connections() == 1; }));
  master_.Push(MakeStart("a2", "echo never"));
  ASSERT_TRUE(WaitUntil([&] { return Exited("a2"); }));
  auto states = States("a2");
  EXPECT_EQ(states.back().exit_code, 1);
  EXPECT_NE(states.back().message.find("bad allocation token"), std::string::npos) << states.back().message;
  EXPECT_TRUE(LogLines("a2").empty());
}

TEST_F(AgentDaemonTest, ReportsItsRunningProcessAfterReconnecting) {
  ServeModel("a3", "tok-a3");
  StartAgent();
  ASSERT_TRUE(WaitUntil([&] { return master_.connections() == 1; }));
  master_.Push(MakeStart("a3", "echo up; exec sleep 30"));
  ASSERT_TRUE(WaitUntil([&] { return !LogLines("a3").empty(); }));
  master_.Drop();
  ASSERT_TRUE(WaitUntil([&] { return master_.Received<proto::Hello>().size() == 2; }));
  auto hello = master_.Received<proto::Hello>()[1];
  ASSERT_EQ(hello.running.size(), 1u);
  EXPECT_EQ(hello.running[0].allocation_id, "a3");
  EXPECT_GT(hello.running[0].pid, 0);
  pid_t trial = static_cast<pid_t>(hello.running[0].pid);
  EXPECT_EQ(::kill(trial, 0), 0);  // still alive across the reconnect

  master_.Push(proto::Kill{"a3", 500, "test"});
  ASSERT_TRUE(WaitUntil([&] { return Exited("a3"); }));
  EXPECT_EQ(States("a3").back().signal, SIGTERM);
  agent_->Signal(SIGTERM);
  ASSERT_TRUE(agent_->Wait(5s).has_value());
}

}  // namespace
}  // namespace ring
