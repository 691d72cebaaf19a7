// MasterLink against a small in-test WebSocket master on 127.0.0.1:0.
#include <gtest/gtest.h>

#include "tests/support/held_port.h"
#include "tests/unit/agent/agent_test_master.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "agent/master_link.h"

namespace ring {
namespace {

using namespace std::chrono_literals;
using agent_test::TestMaster;
using agent_test::WaitUntil;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// A MasterLink on its own io_context thread.
class LinkHarness {
 public:
  explicit LinkHarness(const std::string& url, std::string token = "") {
    MasterLink::Options options;
    options.master_url = url;
    options.agent_id = "agent-1";
    options.credential = std::move(token);
    options.backoff_initial = 20ms;
    options.backoff_max = 200ms;
    MasterLink::Callbacks callbacks;
    callbacks.make_hello = [this](const std::string& local_address) {
      proto::Hello hello;
      hello.agent_id = "agent-1";
      hello.pool = "gpu";
      hello.address = local_address;
      hello.version = "test";
      hello.slots = {{0, "cpu", ""}};
      hello.running = {{"a1", 0, 4242}};
      return hello;
    };
    callbacks.on_start = [this](proto::Start s) {
      std::lock_guard lock(mutex_);
      starts_.push_back(std::move(s));
    };
    callbacks.on_kill = [this](proto::Kill k) {
      std::lock_guard lock(mutex_);
      kills_.push_back(std::move(k));
    };
    link_ = std::make_unique<MasterLink>(io_, std::move(options), std::move(callbacks));
    thread_ = std::thread([this] { io_.run(); });
  }
  ~LinkHarness() {
    Stop();
    work_.reset();
    io_.stop();
    thread_.join();
  }
  bool Stop() {
    if (stopped_) return true;
    std::atomic<bool> done{false};
    link_->Stop([&] { done = true; });
    bool ok = WaitUntil([&] { return done.load(); }, 10s);
    stopped_ = true;
    return ok;
  }
  MasterLink& link() { return *link_; }
  std::vector<proto::Start> starts() {
    std::lock_guard lock(mutex_);
    return starts_;
  }
  std::vector<proto::Kill> kills() {
    std::lock_guard lock(mutex_);
    return kills_;
  }

 private:
  net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_{io_.get_executor()};
  std::unique_ptr<MasterLink> link_;
  std::thread thread_;
  bool stopped_ = false;
  std::mutex mutex_;
  std::vector<proto::Start> starts_;
  std::vector<proto::Kill> kills_;
};

proto::StateChange Exited(const std::string& id, int code) {
  proto::StateChange s;
  s.allocation_id = id;
  s.state = proto::ProcessState::kExited;
  s.exit_code = code;
  return s;
}

TEST(AgentMasterLink, HelloWelcomeThenHeartbeats) {
  TestMaster master;
  LinkHarness h(master.url(), "cluster-secret");
  h.link().Start();
  ASSERT_TRUE(WaitUntil([&] { return h.link().connected(); }));
  auto hellos = master.Received<proto::Hello>();
  ASSERT_EQ(hellos.size(), 1u);
  EXPECT_EQ(hellos[0].agent_id, "agent-1");
  EXPECT_EQ(hellos[0].pool, "gpu");
  EXPECT_EQ(hellos[0].address, "127.0.0.1");
  ASSERT_EQ(hellos[0].running.size(), 1u);
  EXPECT_EQ(hellos[0].running[0].pid, 4242);
  EXPECT_EQ(master.authorization(), "Bearer cluster-secret");
  EXPECT_EQ(master.target(), "/api/v1/agents/ws");
  EXPECT_TRUE(std::holds_alternative<proto::Hello>(master.frames().front().message));
  // The welcome asked for a heartbeat every 30 ms.
  ASSERT_TRUE(WaitUntil([&] { return master.CountHeartbeats(1) >= 5; }, 3s));
  EXPECT_EQ(h.link().sessions(), 1);
}

TEST(AgentMasterLink, NoAuthorizationHeaderWithoutToken) {
  TestMaster master;
  LinkHarness h(master.url());
  h.link().Start();
  ASSERT_TRUE(WaitUntil([&] { return h.link().connected(); }));
  EXPECT_EQ(master.authorization(), "");
}

TEST(AgentMasterLink, ReconnectsAfterTheMasterDropsTheConnection) {
  TestMaster master;
  LinkHarness h(master.url());
  h.link().Start();
  ASSERT_TRUE(WaitUntil([&] { return master.connections() == 1 && master.CountHeartbeats(1) >= 1; }));
  master.Drop();
  ASSERT_TRUE(WaitUntil([&] { return master.connections() == 2 && h.link().connected(); }));
  EXPECT_EQ(master.Received<proto::Hello>().size(), 2u);
  ASSERT_TRUE(WaitUntil([&] { return master.CountHeartbeats(2) >= 2; }));
  EXPECT_EQ(h.link().sessions(), 2);
}

TEST(AgentMasterLink, KeepsRetryingWhileRefusedThenDeliversQueuedMessagesInOrder) {
  TestMaster master;
  master.set_refuse(true);
  LinkHarness h(master.url());
  h.link().Start();
  ASSERT_TRUE(WaitUntil([&] { return master.refused() >= 3; }));
  EXPECT_FALSE(h.link().connected());
  h.link().Send(Exited("a1", 0));
  proto::LogBatch batch;
  batch.allocation_id = "a1";
  batch.seq = 7;
  batch.lines.push_back({1, "stdout", "queued line"});
  h.link().Send(batch);
  h.link().Send(Exited("a2", 1));
  ASSERT_TRUE(WaitUntil([&] { return h.link().queued() == 3; }));
  master.set_refuse(false);
  ASSERT_TRUE(WaitUntil([&] { return master.Received<proto::StateChange>().size() == 2; }));
  auto frames = master.frames();
  ASSERT_GE(frames.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<proto::Hello>(frames[0].message));
  std::vector<std::string> order;
  for (const auto& f : frames) {
    if (auto* s = std::get_if<proto::StateChange>(&f.message)) order.push_back(s->allocation_id);
    if (auto* l = std::get_if<proto::LogBatch>(&f.message)) order.push_back("log" + std::to_string(l->seq));
  }
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "log7", "a2"}));
  EXPECT_EQ(h.link().queued(), 0u);
}

TEST(AgentMasterLink, BackoffDoublesUpToItsMaximum) {
  TestMaster master;
  master.set_refuse(true);
  LinkHarness h(master.url());  // backoff 20 ms doubling to 200 ms, half of it jitter
  h.link().Start();
  ASSERT_TRUE(WaitUntil([&] { return master.refused() >= 9; }));
  auto at = master.refused_at();
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < at.size(); ++i)
    gaps.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(at[i] - at[i - 1]).count());
  EXPECT_LT(gaps[0], 100) << "the first retry comes after about 10-20 ms";
  // 20, 40, 80, 160, 200, 200...: from the fifth retry on, between 100 and 200 ms (plus slack).
  for (size_t i = 5; i < gaps.size(); ++i) {
    EXPECT_GE(gaps[i], 95) << "gap " << i;
    EXPECT_LT(gaps[i], 600) << "gap " << i;
  }
}

TEST(AgentMasterLink, DispatchesStartAndKillAndIgnoresGarbage) {
  TestMaster master;
  LinkHarness h(master.url());
  h.link().Start();
  ASSERT_TRUE(WaitUntil([&] { return h.link().connected(); }));
  proto::Start start;
  start.allocation_id = "a9";
  start.rank = 1;
  start.entrypoint = "echo hi";
  start.slot_type = "cpu";
  start.model_definition_path = "/x";
  master.PushRaw("not json");
  master.PushRaw(R"({"type":"start","allocation_id":"bad"})");  // missing fields
  master.PushRaw(R"({"type":"launch_missiles"})");
  master.Push(start);
  master.Push(proto::Kill{"a9", 250, "user"});
  ASSERT_TRUE(WaitUntil([&] { return h.starts().size() == 1 && h.kills().size() == 1; }));
  EXPECT_EQ(h.starts()[0].allocation_id, "a9");
  EXPECT_EQ(h.starts()[0].rank, 1);
  EXPECT_EQ(h.kills()[0].grace_ms, 250);
  EXPECT_TRUE(h.link().connected());
}

TEST(AgentMasterLink, StopFlushesQueuedMessagesAndClosesCleanly) {
  TestMaster master;
  LinkHarness h(master.url());
  h.link().Start();
  ASSERT_TRUE(WaitUntil([&] { return h.link().connected(); }));
  h.link().Send(Exited("last", 0));
  ASSERT_TRUE(h.Stop());
  ASSERT_TRUE(WaitUntil([&] { return master.close_frame_seen(); }));
  auto states = master.Received<proto::StateChange>();
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].allocation_id, "last");
  EXPECT_FALSE(h.link().connected());
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(master.connections(), 1);  // no reconnect after Stop
}

TEST(AgentMasterLink, StopWhileTheMasterIsUnreachableReturnsPromptly) {
  // A port with nothing listening, held so that nothing else gets it.
  const testing::HeldPort closed;
  std::string url = "http://127.0.0.1:" + std::to_string(closed.port());
  LinkHarness h(url);
  h.link().Start();
  std::this_thread::sleep_for(150ms);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(h.Stop());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
}

}  // namespace
}  // namespace ring
