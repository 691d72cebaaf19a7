// AllocationSupervisor and AllocationRunner with a fake launcher, a fake model
// fetcher and a recording sink; one test with the real POSIX launcher.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/thread_pool.hpp>

#include "agent/allocation_supervisor.h"
#include "agent/fake_message_sink.h"
#include "agent/fake_process_launcher.h"
#include "agent/posix_process_launcher.h"
#include "agent/terminal_hub.h"
#include "tests/support/wait_until.h"

namespace ring {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using PS = proto::ProcessState;

// Writes model.txt into the work directory, or fails; can hold calls until released.
class FakeModelFetcher : public ModelFetcher {
 public:
  Status Fetch(const proto::Start& start, const std::string& dest) override {
    std::unique_lock lock(mutex_);
    ++calls_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !hold_; });
    if (!error_.ok()) return error_;
    std::ofstream(dest + "/model.txt") << "model of " << start.allocation_id << "\n";
    return Status::Ok();
  }
  void Fail(Status s) {
    std::lock_guard lock(mutex_);
    error_ = std::move(s);
  }
  void Hold(bool hold) {
    std::lock_guard lock(mutex_);
    hold_ = hold;
    cv_.notify_all();
  }
  bool WaitCalls(int n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, 5s, [&] { return calls_ >= n; });
  }
  int calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  Status error_;
  bool hold_ = false;
  int calls_ = 0;
};

std::vector<PS> StatesOf(const std::vector<proto::StateChange>& states, const std::string& id = "") {
  std::vector<PS> out;
  for (const auto& s : states)
    if (id.empty() || s.allocation_id == id) out.push_back(s.state);
  return out;
}

bool HasExited(const std::vector<proto::Message>& messages, const std::string& id) {
  for (const auto& m : messages)
    if (auto* s = std::get_if<proto::StateChange>(&m); s && s->allocation_id == id && s->state == PS::kExited)
      return true;
  return false;
}

using ring::testing::WaitUntil;

class AgentAllocationRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ring-agent-runner-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_);
    io_thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    io_.stop();
    io_thread_.join();
    workers_.join();  // before the supervisor: worker jobs use its RunnerContext
    supervisor_.reset();
    fs::remove_all(root_);
  }

  AllocationSupervisor& Supervisor(ProcessLauncher& launcher, TerminalHub* terminals = nullptr) {
    RunnerContext context{boost::asio::make_strand(io_), workers_.get_executor()};
    context.launcher = &launcher;
    context.fetcher = &fetcher_;
    context.sink = &sink_;
    context.master_url = "http://master:8080";
    context.agent_id = "agent-7";
    context.agent_address = [this] { return agent_address_; };
    context.work_root = root_.string();
    context.slots = {{0, "cpu", ""}, {1, "cpu", ""}};
    context.inherited_env = {{"PATH", "/usr/bin:/bin"}};
    context.terminals = terminals;
    supervisor_ = std::make_unique<AllocationSupervisor>(std::move(context));
    return *supervisor_;
  }

  static proto::Start MakeStart(const std::string& id, int rank = 0) {
    proto::Start s;
    s.allocation_id = id;
    s.allocation_token = "tok-" + id;
    s.trial_id = 5;
    s.experiment_id = 2;
    s.rank = rank;
    s.world_size = 2;
    s.local_rank = rank;
    s.local_world_size = 2;
    s.slot_ids = {rank};
    s.slot_type = "cpu";
    s.entrypoint = "python3 train.py";
    s.model_definition_path = "/api/v1/allocations/" + id + "/model_definition";
    return s;
  }

  // The pid of the only launched process, once launched.
  int64_t WaitLaunched(FakeProcessLauncher& launcher, size_t n = 1) {
    EXPECT_TRUE(WaitUntil([&] { return launcher.launched().size() >= n; }));
    auto launched = launcher.launched();
    return launched.size() >= n ? launched[n - 1].pid : 0;
  }

  fs::path root_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
  boost::asio::thread_pool workers_{1};
  std::thread io_thread_;
  FakeModelFetcher fetcher_;
  FakeMessageSink sink_;
  std::unique_ptr<AllocationSupervisor> supervisor_;
  std::string agent_address_ = "10.1.2.3";  // read by the strand at launch
};

TEST_F(AgentAllocationRunnerTest, RunsToCompletionWithTheRightStatesAndCleansUp) {
  FakeProcessLauncher launcher;
  auto& sup = Supervisor(launcher);
  sup.HandleStart(MakeStart("a1", 1));
  int64_t pid = WaitLaunched(launcher);
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return m.size() >= 2; }));

  auto launched = launcher.launched()[0];
  EXPECT_EQ(launched.spec.argv, (std::vector<std::string>{"/bin/sh", "-c", "python3 train.py"}));
  fs::path work_dir = root_ / "a1.r1";
  EXPECT_EQ(launched.spec.cwd, work_dir.string());
  EXPECT_TRUE(fs::exists(work_dir / "model.txt"));
  auto has = [&](const std::string& entry) {
    return std::find(launched.spec.env.begin(), launched.spec.env.end(), entry) != launched.spec.env.end();
  };
  EXPECT_TRUE(has("RANK=1"));
  EXPECT_TRUE(has("RING_ALLOCATION_TOKEN=tok-a1"));
  EXPECT_TRUE(has("RING_MASTER_URL=http://master:8080"));
  EXPECT_TRUE(has("CUDA_VISIBLE_DEVICES="));
  EXPECT_TRUE(has("PATH=/usr/bin:/bin"));
  EXPECT_TRUE(has("RING_AGENT_ID=agent-7"));
  EXPECT_TRUE(has("RING_AGENT_ADDR=10.1.2.3"));

  auto running = sup.Running();
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].allocation_id, "a1");
  EXPECT_EQ(running[0].rank, 1);
  EXPECT_EQ(running[0].pid, pid);

  launcher.EmitLine(pid, OutputStream::kStdout, "hello");
  launcher.EmitLine(pid, OutputStream::kStderr, "warning");
  // Fewer than 100 lines: the batch goes out after about 200 ms.
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return m.size() >= 3; }, 2s));
  auto logs = sink_.logs();
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].allocation_id, "a1");
  EXPECT_EQ(logs[0].rank, 1);
  EXPECT_EQ(logs[0].seq, 0);
  ASSERT_EQ(logs[0].lines.size(), 2u);
  EXPECT_EQ(logs[0].lines[0].line, "hello");
  EXPECT_EQ(logs[0].lines[0].stream, "stdout");
  EXPECT_EQ(logs[0].lines[1].stream, "stderr");
  EXPECT_GT(logs[0].lines[0].ts_ms, 1600000000000);

  launcher.EmitLine(pid, OutputStream::kStdout, "last words");
  launcher.Exit(pid, ExitStatus{0, std::nullopt});
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "a1"); }));
  ASSERT_TRUE(WaitUntil([&] { return sup.active() == 0; }));
  EXPECT_FALSE(fs::exists(work_dir));

  auto messages = sink_.messages();
  ASSERT_EQ(messages.size(), 5u);
  // The last batch is flushed before the exit is reported.
  ASSERT_TRUE(std::holds_alternative<proto::LogBatch>(messages[3]));
  EXPECT_EQ(std::get<proto::LogBatch>(messages[3]).seq, 1);
  EXPECT_EQ(StatesOf(sink_.states()), (std::vector<PS>{PS::kStarting, PS::kRunning, PS::kExited}));
  auto exited = sink_.states().back();
  EXPECT_EQ(exited.exit_code, 0);
  EXPECT_FALSE(exited.signal.has_value());
  EXPECT_EQ(exited.rank, 1);
}

TEST_F(AgentAllocationRunnerTest, PerNodeStartRunsOneProcessForAllItsSlots) {
  // The second node of a per-node allocation of 4 slots on 2 agents: one
  // Start for both slots here, one process, reported as rank 1 (the node).
  FakeProcessLauncher launcher;
  auto& sup = Supervisor(launcher);
  proto::Start start = MakeStart("pn", 1);
  start.per_node = true;
  start.node_rank = 1;
  start.world_size = 4;
  start.local_rank = 0;
  start.local_world_size = 2;
  start.slot_ids = {0, 1};
  start.node_addrs = {"10.9.9.9", "10.1.2.3"};
  start.node_slot_counts = {2, 2};  // this node runs ranks 2 and 3
  sup.HandleStart(start);
  const int64_t pid = WaitLaunched(launcher);
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return m.size() >= 2; }));
  ASSERT_EQ(launcher.launched().size(), 1u);
  const auto env = launcher.launched()[0].spec.env;
  auto has = [&](const std::string& entry) { return std::find(env.begin(), env.end(), entry) != env.end(); };
  EXPECT_TRUE(has("NODE_RANK=1"));
  EXPECT_TRUE(has("NNODES=2"));
  EXPECT_TRUE(has("WORLD_SIZE=4"));
  EXPECT_TRUE(has("LOCAL_WORLD_SIZE=2"));
  EXPECT_TRUE(has("RING_SLOT_IDS=0,1"));
  EXPECT_TRUE(has("RING_CONTAINER_ADDRS=10.9.9.9,10.1.2.3"));
  EXPECT_TRUE(has("RING_CONTAINER_RANK=1"));
  EXPECT_EQ(
      std::count_if(env.begin(), env.end(), [](const std::string& e) { return e.rfind("RANK=", 0) == 0; }),
      0);
  EXPECT_EQ(launcher.launched()[0].spec.cwd, (root_ / "pn.r1").string());
  auto running = sup.Running();
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].rank, 1);

  launcher.EmitLine(pid, OutputStream::kStdout, "node line");
  launcher.EmitLine(pid, OutputStream::kStdout, "[rank=3] worker line");  // wrap_rank's prefix
  launcher.EmitLine(pid, OutputStream::kStderr, "[rank=1] not this node's rank");
  launcher.Exit(pid, ExitStatus{0, std::nullopt});
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "pn"); }));
  ASSERT_TRUE(WaitUntil([&] { return sup.active() == 0; }));
  auto logs = sink_.logs();
  ASSERT_FALSE(logs.empty());
  EXPECT_EQ(logs[0].rank, 1);
  std::vector<proto::LogLine> lines;
  for (const auto& batch : logs) lines.insert(lines.end(), batch.lines.begin(), batch.lines.end());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].line, "node line");
  EXPECT_EQ(lines[0].rank, std::nullopt);
  EXPECT_EQ(lines[1].line, "worker line");
  EXPECT_EQ(lines[1].rank, 3);
  EXPECT_EQ(lines[2].line, "[rank=1] not this node's rank");
  EXPECT_EQ(lines[2].rank, std::nullopt);
  EXPECT_EQ(StatesOf(sink_.states()), (std::vector<PS>{PS::kStarting, PS::kRunning, PS::kExited}));
  EXPECT_EQ(sink_.states().back().rank, 1);
  EXPECT_EQ(sink_.states().back().exit_code, 0);
}

TEST_F(AgentAllocationRunnerTest, AShellsRankRunsInATerminalWhoseOutputIsNoLog) {
  FakeProcessLauncher launcher;
  TerminalHub terminals(launcher, sink_);
  auto& sup = Supervisor(launcher, &terminals);
  proto::Start start = MakeStart("sh1");
  start.entrypoint.clear();
  start.entrypoint_argv = {"/bin/bash", "-l"};
  start.terminal = true;
  sup.HandleStart(start);
  const int64_t pid = WaitLaunched(launcher);
  ASSERT_TRUE(launcher.launched()[0].spec.terminal.has_value());
  launcher.EmitTerminalOutput(pid, "$ ");
  terminals.Handle(proto::TerminalOpen{"sh1", 0, "s1", 24, 80});
  terminals.Handle(proto::TerminalInput{"s1", "exit\n"});
  EXPECT_EQ(launcher.typed(pid), "exit\n");
  launcher.Exit(pid, ExitStatus{0, std::nullopt});
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "sh1"); }));
  bool replayed = false, closed = false;
  for (const auto& m : sink_.messages()) {
    if (auto* o = std::get_if<proto::TerminalOutput>(&m)) replayed = replayed || o->data == "$ ";
    if (auto* c = std::get_if<proto::TerminalClosed>(&m)) closed = closed || c->session == "s1";
  }
  EXPECT_TRUE(replayed);
  EXPECT_TRUE(WaitUntil([&] { return terminals.sessions() == 0; }));
  for (const auto& m : sink_.messages())
    if (auto* c = std::get_if<proto::TerminalClosed>(&m)) closed = closed || c->session == "s1";
  EXPECT_TRUE(closed);
  EXPECT_TRUE(sink_.logs().empty()) << "a terminal's output is no log";
}

TEST_F(AgentAllocationRunnerTest, OneHundredLinesAreSentAtOnce) {
  FakeProcessLauncher launcher;
  auto& sup = Supervisor(launcher);
  sup.HandleStart(MakeStart("a1"));
  int64_t pid = WaitLaunched(launcher);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 250; ++i) launcher.EmitLine(pid, OutputStream::kStdout, "line " + std::to_string(i));
  // Two full batches go out without waiting for the timer.
  auto logs = sink_.logs();
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 150ms);
  EXPECT_EQ(logs[0].lines.size(), 100u);
  EXPECT_EQ(logs[1].lines.front().line, "line 100");
  launcher.Exit(pid, ExitStatus{0, std::nullopt});
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "a1"); }));
  logs = sink_.logs();
  ASSERT_EQ(logs.size(), 3u);
  EXPECT_EQ(logs[2].lines.size(), 50u);
  EXPECT_EQ(logs[2].seq, 2);
}

TEST_F(AgentAllocationRunnerTest, DownloadFailureReportsExitWithoutAProcess) {
  FakeProcessLauncher launcher;
  fetcher_.Fail(Status(ErrorCode::kUnavailable, "model download failed: HTTP 404"));
  auto& sup = Supervisor(launcher);
  sup.HandleStart(MakeStart("a1"));
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "a1"); }));
  EXPECT_TRUE(launcher.launched().empty());
  auto states = sink_.states();
  EXPECT_EQ(StatesOf(states), (std::vector<PS>{PS::kStarting, PS::kExited}));
  EXPECT_EQ(states.back().exit_code, 1);
  EXPECT_NE(states.back().message.find("model download failed"), std::string::npos);
  ASSERT_TRUE(WaitUntil([&] { return sup.active() == 0; }));
  EXPECT_FALSE(fs::exists(root_ / "a1.r0"));
}

TEST_F(AgentAllocationRunnerTest, LaunchFailureReportsExit127) {
  FakeProcessLauncher launcher;
  launcher.FailNextLaunch(InvalidArgument("cannot start /bin/sh: No such file or directory"));
  auto& sup = Supervisor(launcher);
  sup.HandleStart(MakeStart("a1"));
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "a1"); }));
  auto states = sink_.states();
  EXPECT_EQ(StatesOf(states), (std::vector<PS>{PS::kStarting, PS::kExited}));
  EXPECT_EQ(states.back().exit_code, 127);
  EXPECT_NE(states.back().message.find("No such file"), std::string::npos);
}

TEST_F(AgentAllocationRunnerTest, DuplicateStartIsIgnored) {
  FakeProcessLauncher launcher;
  auto& sup = Supervisor(launcher);
  sup.HandleStart(MakeStart("a1"));
  WaitLaunched(launcher);
  sup.HandleStart(MakeStart("a1"));
  sup.HandleStart(MakeStart("a1", 1));  // another rank of the same allocation is not a duplicate
  WaitLaunched(launcher, 2);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(launcher.launched().size(), 2u);
  EXPECT_EQ(fetcher_.calls(), 2);
  EXPECT_EQ(sup.Running().size(), 2u);
}

TEST_F(AgentAllocationRunnerTest, KillTerminatesEveryRankOfTheAllocation) {
  FakeProcessLauncher launcher;
  launcher.set_exit_on_terminate(true);
  auto& sup = Supervisor(launcher);
  sup.HandleStart(MakeStart("a1", 0));
  sup.HandleStart(MakeStart("a1", 1));
  sup.HandleStart(MakeStart("b2", 0));
  WaitLaunched(launcher, 3);
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return m.size() >= 6; }));
  sup.HandleKill(proto::Kill{"a1", 1500, "preempted"});
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) {
    int exited = 0;
    for (const auto& msg : m)
      if (auto* s = std::get_if<proto::StateChange>(&msg); s && s->state == PS::kExited) ++exited;
    return exited >= 2;
  }));
  auto terminations = launcher.terminations();
  ASSERT_EQ(terminations.size(), 2u);
  EXPECT_EQ(terminations[0].second, 1500ms);
  for (const auto& s : sink_.states()) {
    if (s.state != PS::kExited) continue;
    EXPECT_EQ(s.allocation_id, "a1");
    EXPECT_EQ(s.signal, SIGTERM);
    EXPECT_NE(s.message.find("preempted"), std::string::npos);
  }
  ASSERT_TRUE(WaitUntil([&] { return sup.active() == 1; }));
  EXPECT_EQ(sup.Running()[0].allocation_id, "b2");
}

TEST_F(AgentAllocationRunnerTest, KillWhileDownloadingReportsAtOnceAndNeverLaunches) {
  FakeProcessLauncher launcher;
  fetcher_.Hold(true);
  auto& sup = Supervisor(launcher);
  sup.HandleStart(MakeStart("a1"));
  ASSERT_TRUE(fetcher_.WaitCalls(1));
  sup.HandleKill(proto::Kill{"a1", 1000, "experiment canceled"});
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "a1"); }));
  EXPECT_EQ(sup.Running().size(), 0u);  // reported exited, only cleanup remains
  fetcher_.Hold(false);
  ASSERT_TRUE(WaitUntil([&] { return sup.active() == 0; }));
  EXPECT_TRUE(launcher.launched().empty());
  EXPECT_EQ(StatesOf(sink_.states()), (std::vector<PS>{PS::kStarting, PS::kExited}));
  EXPECT_FALSE(fs::exists(root_ / "a1.r0"));
}

TEST_F(AgentAllocationRunnerTest, UnsafeAllocationIdIsRefused) {
  FakeProcessLauncher launcher;
  auto& sup = Supervisor(launcher);
  sup.HandleStart(MakeStart("../escape"));
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "../escape"); }));
  ASSERT_TRUE(WaitUntil([&] { return sup.active() == 0; }));
  EXPECT_EQ(fetcher_.calls(), 0);
  EXPECT_TRUE(launcher.launched().empty());
}

TEST_F(AgentAllocationRunnerTest, ShutdownTerminatesEverythingThenRefusesStarts) {
  FakeProcessLauncher launcher;
  launcher.set_exit_on_terminate(true);
  auto& sup = Supervisor(launcher);
  sup.HandleStart(MakeStart("a1"));
  sup.HandleStart(MakeStart("b2"));
  WaitLaunched(launcher, 2);
  std::atomic<bool> done{false};
  sup.Shutdown(3s, [&] { done = true; });
  ASSERT_TRUE(WaitUntil([&] { return done.load(); }));
  EXPECT_EQ(sup.active(), 0u);
  EXPECT_EQ(launcher.terminations().size(), 2u);
  EXPECT_EQ(launcher.terminations()[0].second, 3s);
  sup.HandleStart(MakeStart("c3"));
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "c3"); }));
  EXPECT_EQ(launcher.launched().size(), 2u);
}

TEST_F(AgentAllocationRunnerTest, ShutdownWithNothingRunningFinishesAtOnce) {
  FakeProcessLauncher launcher;
  auto& sup = Supervisor(launcher);
  std::atomic<bool> done{false};
  sup.Shutdown(1s, [&] { done = true; });
  EXPECT_TRUE(WaitUntil([&] { return done.load(); }, 1s));
}

TEST_F(AgentAllocationRunnerTest, RealProcessEndToEnd) {
  PosixProcessLauncher launcher;
  auto& sup = Supervisor(launcher);
  proto::Start start = MakeStart("real");
  start.entrypoint = "cat model.txt; echo \"rank=$RANK world=$WORLD_SIZE\"; echo oops >&2; exit 4";
  sup.HandleStart(start);
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "real"); }));
  auto states = sink_.states();
  EXPECT_EQ(StatesOf(states), (std::vector<PS>{PS::kStarting, PS::kRunning, PS::kExited}));
  EXPECT_EQ(states.back().exit_code, 4);
  std::vector<std::string> out, err;
  for (const auto& batch : sink_.logs())
    for (const auto& line : batch.lines) (line.stream == "stdout" ? out : err).push_back(line.line);
  EXPECT_EQ(out, (std::vector<std::string>{"model of real", "rank=0 world=2"}));
  EXPECT_EQ(err, std::vector<std::string>{"oops"});
  ASSERT_TRUE(WaitUntil([&] { return sup.active() == 0; }));
  EXPECT_FALSE(fs::exists(root_ / "real.r0"));
}

TEST_F(AgentAllocationRunnerTest, RealProcessKilledWithGrace) {
  PosixProcessLauncher launcher;
  auto& sup = Supervisor(launcher);
  proto::Start start = MakeStart("stubborn");
  start.entrypoint = "trap '' TERM; echo ready; while true; do sleep 0.05; done";
  sup.HandleStart(start);
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) {
    for (const auto& msg : m)
      if (std::holds_alternative<proto::LogBatch>(msg)) return true;
    return false;
  }));
  sup.HandleKill(proto::Kill{"stubborn", 300, "test"});
  ASSERT_TRUE(sink_.WaitFor([](const auto& m) { return HasExited(m, "stubborn"); }));
  EXPECT_EQ(sink_.states().back().signal, SIGKILL);
}

}  // namespace
}  // namespace ring
