// Silence after hello, against a real master on 127.0.0.1: the master
// closes the connection of an agent that stops sending frames once its
// heartbeat timeout passes (the session itself no longer times reads after
// the hello), while an agent that heartbeats stays connected and its
// last_seen_at moves on. And the agents' connections run on the master's
// agent thread, at its nice value, not on the thread that serves requests,
// which, like every other thread of the master, runs in the short time
// slices thread_slice_us asks for.
// Raw WebSocket clients (tests/support/fake_agent.h).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/fake_agent.h"
#include "tests/support/raw_connection.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::agent_silence {
namespace {

using namespace std::chrono_literals;

std::string ClusterToken(const TestCluster& cluster) {
  std::ifstream in(cluster.cluster_token_file());
  std::string token;
  in >> token;
  return token;
}

proto::Hello HelloOf(const std::string& id) {
  proto::Hello hello;
  hello.agent_id = id;
  hello.pool = "fakes";
  hello.address = "127.0.0.1";
  hello.version = "fake";
  hello.slots.push_back({0, "cpu", ""});
  return hello;
}

nlohmann::json AgentOf(TestCluster& cluster, const std::string& id) {
  for (const auto& a : cluster.GetJson("/api/v1/agents").value("agents", nlohmann::json::array()))
    if (a.value("id", "") == id) return a;
  return nlohmann::json::object();
}

TEST(AgentSilenceTest, ASilentAgentIsClosedAfterItsHeartbeatTimeoutAndAHeartbeatingOneStays) {
  TestCluster cluster;
  TestCluster::MasterOptions options;
  options.heartbeat_timeout_ms = 2000;
  cluster.StartMaster(options);
  const int port = PortOf(cluster.url());
  std::map<std::string, std::unique_ptr<FakeAgent>> agents;
  for (const std::string id : {"quiet", "beating"}) {
    auto enrolled =
        EnrolAgent(port, ClusterToken(cluster), {{"agent_id", id}, {"pool", "fakes"}, {"slots", 1}});
    ASSERT_EQ(enrolled.status, 201) << enrolled.body.dump();
    agents[id] =
        std::make_unique<FakeAgent>(port, FakeAgent::Credentials(id, enrolled.body.value("credential", "")));
    ASSERT_TRUE(agents[id]->upgraded()) << agents[id]->status() << " " << agents[id]->body();
    ASSERT_TRUE(agents[id]->Hello(HelloOf(id))) << id;
  }
  const std::string first_seen = AgentOf(cluster, "beating").value("last_seen_at", "");
  EXPECT_FALSE(first_seen.empty());

  // The heartbeating agent sends one every 300 ms on a thread of its own
  // while this thread waits for the master to close the quiet one.
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  std::thread beats([&] {
    while (!stop) {
      if (agents["beating"]->Send(proto::Heartbeat{})) ++sent;
      std::this_thread::sleep_for(300ms);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  auto frame = agents["quiet"]->ReadOne(8s);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(frame.has_value());
  EXPECT_TRUE(agents["quiet"]->closed()) << "the quiet agent's connection was not closed within 8 s";
  EXPECT_GE(waited, 1500ms);  // not before its timeout (2 s from its hello)
  EXPECT_LT(waited, 6s);
  EXPECT_TRUE(
      TestCluster::WaitFor([&] { return AgentOf(cluster, "quiet").value("state", "") != "connected"; }, 5s))
      << AgentOf(cluster, "quiet").dump();

  std::this_thread::sleep_for(1s);  // past the heartbeat timeout again
  stop = true;
  beats.join();
  EXPECT_GT(sent.load(), 5);
  const auto beating = AgentOf(cluster, "beating");
  EXPECT_EQ(beating.value("state", ""), "connected") << beating.dump();
  // RFC 3339 with milliseconds, and later than at the hello.
  const std::string last_seen = beating.value("last_seen_at", "");
  EXPECT_EQ(last_seen.size(), std::string("2026-01-01T00:00:00.000Z").size()) << last_seen;
  EXPECT_GT(last_seen, first_seen);
}

// One thread of a process, from /proc/<pid>/task/<tid>/{comm,stat,status}.
struct ThreadSample {
  int tid = 0;
  std::string name;
  int nice = 0;
  long wakeups = 0;  // voluntary context switches: each wait for the network ends in one
};

std::vector<ThreadSample> Threads(pid_t pid) {
  std::vector<ThreadSample> threads;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    ThreadSample t;
    t.tid = std::stoi(entry.path().filename().string());
    std::ifstream(entry.path() / "comm") >> t.name;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    // Fields after the command's closing parenthesis: state is field 3, nice field 19.
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 19 && rest >> field; ++i)
      if (i == 19) t.nice = std::stoi(field);
    std::ifstream status(entry.path() / "status");
    while (std::getline(status, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0)
        t.wakeups = std::stol(line.substr(line.find(':') + 1));
    threads.push_back(t);
  }
  return threads;
}

const ThreadSample* Find(const std::vector<ThreadSample>& threads, int tid) {
  for (const auto& t : threads)
    if (t.tid == tid) return &t;
  return nullptr;
}

// The fair scheduler's slice of a thread in ns (/proc/<pid>/task/<tid>/sched).
std::optional<long> SliceNs(pid_t pid, int tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/sched");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("se.slice", 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  return std::nullopt;
}

TEST(AgentSilenceTest, AgentsConnectionsRunOnTheAgentThreadAtItsNiceValue) {
  TestCluster cluster;
  TestCluster::MasterOptions options;
  // One io thread (the main one) for requests; the agents' thread 7 nicer.
  options.extra_args = {"--config", cluster.WriteFile("master.yaml",
                                                      "threads: 1\nagent_threads: 1\nagent_threads_nice: 7\n"
                                                      "thread_slice_us: 200\n")};
  cluster.StartMaster(options);
  const pid_t pid = cluster.master()->pid();
  const int own_nice = Find(Threads(pid), pid)->nice;
  std::vector<int> agent_threads;
  for (const auto& t : Threads(pid))
    if (t.nice == own_nice + 7) agent_threads.push_back(t.tid);
  ASSERT_EQ(agent_threads.size(), 1u) << "one thread at the master's nice value + 7";
  const int agent_thread = agent_threads[0];
  // Named, so an operator finds it (top -H, taskset); the main thread keeps
  // the program's name and the lifecycle thread has its own.
  EXPECT_EQ(Find(Threads(pid), agent_thread)->name, "ring-agents");
  EXPECT_EQ(Find(Threads(pid), pid)->name, "ringmaster");
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        for (const auto& t : Threads(pid))
          if (t.name == "ring-lifecycle") return true;
        return false;
      },
      5s))
      << "no thread named ring-lifecycle";
  // Time slices, where the kernel shows them (6.12+: se.slice, ns): every
  // thread but the agent thread's is thread_slice_us (the lifecycle thread
  // answers requests too), the agent thread's the kernel's, longer.
  if (SliceNs(pid, pid)) {
    for (const auto& t : Threads(pid))
      if (t.tid != agent_thread) EXPECT_EQ(SliceNs(pid, t.tid).value_or(0), 200000) << "thread " << t.tid;
    EXPECT_GT(SliceNs(pid, agent_thread).value_or(0), 200000) << "the agent thread runs in longer slices";
  } else {
    std::fprintf(stderr, "this kernel shows no se.slice: the io thread's slice is not checked\n");
  }

  const int port = PortOf(cluster.url());
  auto enrolled =
      EnrolAgent(port, ClusterToken(cluster), {{"agent_id", "beating"}, {"pool", "fakes"}, {"slots", 1}});
  ASSERT_EQ(enrolled.status, 201) << enrolled.body.dump();
  FakeAgent agent(port, FakeAgent::Credentials("beating", enrolled.body.value("credential", "")));
  ASSERT_TRUE(agent.upgraded()) << agent.status() << " " << agent.body();
  ASSERT_TRUE(agent.Hello(HelloOf("beating")));
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return AgentOf(cluster, "beating").value("state", "") == "connected"; }, 5s));

  // 300 heartbeats a few milliseconds apart: the thread that reads them
  // wakes for each; the requests' thread only for its timers.
  const auto before = Threads(pid);
  int sent = 0;
  for (int i = 0; i < 300; ++i) {
    if (agent.Send(proto::Heartbeat{})) ++sent;
    std::this_thread::sleep_for(3ms);
  }
  std::this_thread::sleep_for(100ms);
  const auto after = Threads(pid);
  EXPECT_EQ(sent, 300);
  const long agent_wakeups = Find(after, agent_thread)->wakeups - Find(before, agent_thread)->wakeups;
  const long main_wakeups = Find(after, pid)->wakeups - Find(before, pid)->wakeups;
  EXPECT_GE(agent_wakeups, 150) << "the agent thread did not read the heartbeats";
  EXPECT_LT(main_wakeups, agent_wakeups / 2) << "the requests' thread woke for the heartbeats";
  EXPECT_EQ(AgentOf(cluster, "beating").value("state", ""), "connected");
}

}  // namespace
}  // namespace ring::testing::agent_silence
