// Preemption and fencing of the trial runtime: the long poll against an
// in-test master, the acknowledgement, SIGTERM (in a child process, since
// the flag it sets is process-wide), and what a 409 or a master that stays
// away does to checkpoints, metrics and the poll.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include "ring/trial/trial.h"
#include "tests/support/fake_http_server.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;
using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

class RuntimePreemptionTest : public ::testing::Test {
 protected:
  Context Cluster(const std::string& url, Environment extra = {}) {
    Environment env = {{"RING_MASTER_URL", url},
                       {"RING_ALLOCATION_ID", "3.0"},
                       {"RING_ALLOCATION_TOKEN", "tok"},
                       {"RING_TRIAL_ID", "3"},
                       {"RING_MAX_LENGTH_BATCHES", "10"},
                       {"RING_API_RETRY_SECONDS", "5"},
                       {"RING_CHECKPOINT_STORAGE", R"({"host_path":"/tmp/ring-preemption-test-unused"})"}};
    for (auto& [k, v] : extra) env[k] = v;
    const char* argv[] = {"trial"};
    ContextOptions o;
    o.local_out = &quiet_;
    o.diagnostics = &quiet_;
    o.reporter.warn = [](const std::string&) {};
    o.reporter.close_timeout = 2s;
    return Context::from_environment(1, argv, env, std::move(o));
  }

  // Calls should_preempt() until it is true or `limit` passed.
  static bool WaitForPreempt(Context& ctx, std::chrono::milliseconds limit = 5s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (ctx.preempt().should_preempt()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  std::ostringstream quiet_;
};

TEST_F(RuntimePreemptionTest, TheLongPollSeesARequestAndTheTrialAcknowledgesOnce) {
  std::atomic<bool> asked{false};
  std::atomic<int> polls{0};
  std::atomic<int> acks{0};
  std::string ack_body;
  FakeHttpServer master([&](const FakeRequest& req) {
    if (req.method == "GET" && req.target == "/api/v1/allocations/3.0/preemption?timeout_s=30") {
      ++polls;
      // A long poll: hold the request a while unless there is news.
      for (int i = 0; i < 10 && !asked; ++i) std::this_thread::sleep_for(20ms);
      return FakeResponse{200, asked ? R"({"preempt":true})" : R"({"preempt":false})"};
    }
    if (req.method == "POST" && req.target == "/api/v1/allocations/3.0/preemption/ack") {
      ++acks;
      ack_body = req.body;
      return FakeResponse{200, "{}"};
    }
    return FakeResponse{404, "{}"};
  });
  auto ctx = Cluster(master.url());
  EXPECT_FALSE(ctx.preempt().should_preempt());
  std::this_thread::sleep_for(600ms);
  EXPECT_FALSE(ctx.preempt().should_preempt());
  EXPECT_GE(polls.load(), 1);
  EXPECT_LE(polls.load(), 4) << "a master that answers quickly must not be polled in a tight loop";
  asked = true;
  EXPECT_TRUE(WaitForPreempt(ctx));
  EXPECT_TRUE(ctx.preempt().should_preempt()) << "a request to stop stays";
  ctx.preempt().acknowledge();
  ctx.preempt().acknowledge();  // once is enough
  EXPECT_EQ(acks.load(), 1);
  EXPECT_EQ(ack_body, "{}");
  for (const auto& req : master.requests()) EXPECT_EQ(req.headers.at("authorization"), "Bearer tok");
}

TEST_F(RuntimePreemptionTest, ThePollSurvivesAMasterThatIsAwayForAWhile) {
  std::atomic<int> polls{0};
  FakeHttpServer master([&](const FakeRequest& req) {
    if (req.target.rfind("/api/v1/allocations/3.0/preemption?", 0) != 0) return FakeResponse{404, "{}"};
    if (++polls <= 3) return FakeResponse{503, R"({"error":{"code":"unavailable","message":"restarting"}})"};
    return FakeResponse{200, R"({"preempt":true})"};
  });
  auto ctx = Cluster(master.url());
  EXPECT_TRUE(WaitForPreempt(ctx, 10s));
  EXPECT_EQ(polls.load(), 4);
}

TEST_F(RuntimePreemptionTest, OnlyTheChiefPolls) {
  FakeHttpServer master([](const FakeRequest&) { return FakeResponse{200, R"({"preempt":true})"}; });
  auto ctx = Cluster(master.url(), {{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  EXPECT_FALSE(ctx.preempt().should_preempt());
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(ctx.preempt().should_preempt());
  EXPECT_TRUE(master.requests().empty());
  ctx.preempt().acknowledge();  // nothing to tell from another rank
  EXPECT_TRUE(master.requests().empty());
}

TEST_F(RuntimePreemptionTest, AFencedOutAllocationStopsThePollAndTheTrial) {
  FakeHttpServer master([](const FakeRequest&) {
    return FakeResponse{409, R"({"error":{"code":"conflict","message":"allocation 3.0 has ended"}})"};
  });
  auto ctx = Cluster(master.url());
  bool thrown = false;
  for (int i = 0; i < 250 && !thrown; ++i) {
    try {
      ctx.preempt().should_preempt();
      std::this_thread::sleep_for(20ms);
    } catch (const AllocationEndedError& e) {
      thrown = true;
      EXPECT_NE(std::string(e.what()).find("409"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(thrown);
  EXPECT_EQ(master.requests().size(), 1u) << "a 409 must not be retried";
  EXPECT_THROW(ctx.preempt().acknowledge(), AllocationEndedError);
}

TEST_F(RuntimePreemptionTest, MetricsOfAFencedOutAllocationStopTheTrial) {
  FakeHttpServer master([](const FakeRequest&) {
    return FakeResponse{409, R"({"error":{"code":"conflict","message":"allocation 3.0 has ended"}})"};
  });
  auto ctx = Cluster(master.url());
  ctx.report_training_metrics(1, {{"loss", 1.0}});
  EXPECT_FALSE(ctx.flush(5s));
  EXPECT_THROW(ctx.report_training_metrics(2, {{"loss", 0.5}}), AllocationEndedError);
  EXPECT_EQ(master.requests().size(), 1u);
}

TEST_F(RuntimePreemptionTest, MetricsStopTheTrialWhenTheMasterStaysAwayTooLong) {
  std::atomic<int> posts{0};
  FakeHttpServer master([&](const FakeRequest&) {
    ++posts;
    return FakeResponse{503, R"({"error":{"code":"unavailable","message":"down"}})"};
  });
  auto ctx = Cluster(master.url(), {{"RING_API_RETRY_SECONDS", "1"}});
  const auto start = std::chrono::steady_clock::now();
  ctx.report_training_metrics(1, {{"loss", 1.0}});
  EXPECT_FALSE(ctx.flush(10s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_GE(posts.load(), 2) << "transient failures are retried first";
  EXPECT_THROW(ctx.report_training_metrics(2, {{"loss", 0.5}}), MasterUnreachableError);
}

TEST_F(RuntimePreemptionTest, MetricsAcknowledgedAreNeverSentAgain) {
  std::mutex mutex;
  std::vector<std::pair<std::string, int64_t>> stored;
  std::atomic<int> posts{0};
  FakeHttpServer master([&](const FakeRequest& req) {
    if (req.target != "/api/v1/allocations/3.0/metrics") return FakeResponse{404, "{}"};
    if (++posts % 2 == 1) return FakeResponse{503, "{}"};  // every other request fails
    auto body = nlohmann::json::parse(req.body);
    std::lock_guard lock(mutex);
    for (const auto& r : body["reports"]) stored.emplace_back(r["kind"], r["batches"]);
    return FakeResponse{200, R"({"stored":1})"};
  });
  auto ctx = Cluster(master.url());
  for (int b = 1; b <= 5; ++b) {
    ctx.report_training_metrics(b, {{"loss", 1.0 / b}});
    ASSERT_TRUE(ctx.flush(10s));
  }
  ctx.report_validation_metrics(5, {{"validation_loss", 0.1}});
  ASSERT_TRUE(ctx.flush(10s));
  std::lock_guard lock(mutex);
  using Stored = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(stored, (Stored{{"training", 1},
                            {"training", 2},
                            {"training", 3},
                            {"training", 4},
                            {"training", 5},
                            {"validation", 5}}));
}

// Runs `body` in a child process; returns its wait status.
template <typename Body>
int InChild(Body body) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

// The first SIGTERM asks; one more right after it is the same request
// (Slurm signals every process of a job, and srun forwards the signal once
// more); a later one kills.
TEST_F(RuntimePreemptionTest, SigtermAsksTheTrialToStopAndALaterOneKills) {
  int status = InChild([this] {
    const char* argv[] = {"trial"};
    ContextOptions o;
    o.local_out = &quiet_;
    o.diagnostics = &quiet_;
    auto ctx = Context::from_environment(1, argv, {}, std::move(o));  // local mode
    if (ctx.preempt().should_preempt()) return 10;
    ::raise(SIGTERM);
    ::raise(SIGTERM);  // the same request, forwarded again
    if (!ctx.preempt().should_preempt()) return 11;
    ctx.preempt().acknowledge();  // nothing to tell in local mode
    std::this_thread::sleep_for(1100ms);
    ::raise(SIGTERM);  // a second request: this one terminates
    return 12;
  });
  ASSERT_FALSE(WIFEXITED(status)) << "the child exited with " << WEXITSTATUS(status);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST_F(RuntimePreemptionTest, SigtermAlsoCountsUnderAMaster) {
  FakeHttpServer master([](const FakeRequest& req) {
    if (req.target.find("/preemption?") != std::string::npos) {
      std::this_thread::sleep_for(100ms);
      return FakeResponse{200, R"({"preempt":false})"};
    }
    return FakeResponse{200, "{}"};
  });
  int status = InChild([&] {
    auto ctx = Cluster(master.url());
    if (ctx.preempt().should_preempt()) return 10;
    ::raise(SIGTERM);
    if (!ctx.preempt().should_preempt()) return 11;
    ctx.preempt().acknowledge();
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  int acks = 0;
  for (const auto& req : master.requests()) acks += req.target == "/api/v1/allocations/3.0/preemption/ack";
  EXPECT_EQ(acks, 1);
}

TEST_F(RuntimePreemptionTest, ATrialWithItsOwnSigtermHandlerKeepsIt) {
  static std::atomic<bool> own{false};
  int status = InChild([this] {
    struct sigaction sa {};
    sa.sa_handler = [](int) { own = true; };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    const char* argv[] = {"trial"};
    ContextOptions o;
    o.local_out = &quiet_;
    o.diagnostics = &quiet_;
    auto ctx = Context::from_environment(1, argv, {}, std::move(o));
    ctx.preempt().should_preempt();
    ::raise(SIGTERM);
    if (!own) return 10;
    return ctx.preempt().should_preempt() ? 11 : 0;
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ring::trial
