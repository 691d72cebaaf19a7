// MetricsReporter: batching (and lingering for a batch), retries, idempotent resends and flush, against a
// fake sink that fails a given number of times before it acknowledges.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "ring/trial/errors.h"
#include "ring/trial/metrics_reporter.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;

// State shared between the test and the sink the reporter owns.
struct FakeSinkState {
  std::mutex mutex;
  std::condition_variable cv;
  int failures_left = 0;  // transient failures before success
  SendOutcome failure = SendOutcome::kTransientFailure;
  bool gate_open = true;                       // send() blocks while false
  int calls_started = 0;                       // send() calls entered (before the gate)
  std::vector<std::vector<int64_t>> attempts;  // batches (by `batches` field) of every call
  std::vector<int64_t> acknowledged;           // in ack order
};

class FakeSink : public MetricsSink {
 public:
  explicit FakeSink(std::shared_ptr<FakeSinkState> s) : s_(std::move(s)) {}
  SendResult send(const std::vector<MetricReport>& batch) override {
    std::unique_lock lock(s_->mutex);
    ++s_->calls_started;
    s_->cv.notify_all();
    s_->cv.wait(lock, [&] { return s_->gate_open; });
    std::vector<int64_t> ids;
    for (const auto& r : batch) ids.push_back(r.batches);
    s_->attempts.push_back(ids);
    if (s_->failures_left > 0) {
      --s_->failures_left;
      return {s_->failure, "injected"};
    }
    s_->acknowledged.insert(s_->acknowledged.end(), ids.begin(), ids.end());
    return {SendOutcome::kAcknowledged, {}};
  }

 private:
  std::shared_ptr<FakeSinkState> s_;
};

ReporterOptions FastOptions() {
  ReporterOptions o;
  o.initial_backoff = 1ms;
  o.max_backoff = 5ms;
  o.close_timeout = 5s;
  o.warn = [](const std::string&) {};
  return o;
}

MetricReport Report(int64_t batches) {
  return {MetricKind::kTraining, batches, {{"loss", 1.0 / (batches + 1)}}};
}

// Waits until the sender entered its n-th send() call.
void WaitForCall(FakeSinkState& s, int n) {
  std::unique_lock lock(s.mutex);
  ASSERT_TRUE(s.cv.wait_for(lock, 5s, [&] { return s.calls_started >= n; }));
}

void SetGate(FakeSinkState& s, bool open) {
  {
    std::lock_guard lock(s.mutex);
    s.gate_open = open;
  }
  s.cv.notify_all();
}

TEST(RuntimeReporterTest, DeliversEveryReportOnceInOrder) {
  auto state = std::make_shared<FakeSinkState>();
  MetricsReporter reporter(std::make_unique<FakeSink>(state), FastOptions());
  for (int i = 0; i < 1000; ++i) reporter.enqueue(Report(i));
  ASSERT_TRUE(reporter.flush(5s));
  std::lock_guard lock(state->mutex);
  ASSERT_EQ(state->acknowledged.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(state->acknowledged[i], i);
  for (const auto& a : state->attempts) EXPECT_LE(a.size(), 500u);
  EXPECT_EQ(reporter.stats().acknowledged, 1000u);
  EXPECT_EQ(reporter.stats().dropped, 0u);
}

TEST(RuntimeReporterTest, CoalescesWhatQueuedWhileARequestWasInFlight) {
  auto state = std::make_shared<FakeSinkState>();
  state->gate_open = false;
  MetricsReporter reporter(std::make_unique<FakeSink>(state), FastOptions());
  reporter.enqueue(Report(0));
  WaitForCall(*state, 1);  // the sender holds report 0 in a blocked request
  for (int i = 1; i <= 1200; ++i) reporter.enqueue(Report(i));
  SetGate(*state, true);
  ASSERT_TRUE(reporter.flush(5s));
  std::lock_guard lock(state->mutex);
  ASSERT_EQ(state->attempts.size(), 4u);  // [0], then 500 + 500 + 200
  EXPECT_EQ(state->attempts[0].size(), 1u);
  EXPECT_EQ(state->attempts[1].size(), 500u);
  EXPECT_EQ(state->attempts[2].size(), 500u);
  EXPECT_EQ(state->attempts[3].size(), 200u);
}

TEST(RuntimeReporterTest, LingersForMoreReportsUntilAFullBatchOrAFlush) {
  auto state = std::make_shared<FakeSinkState>();
  ReporterOptions options = FastOptions();
  options.linger = 1h;  // nothing but a full batch or a flush sends
  options.max_batch = 10;
  MetricsReporter reporter(std::make_unique<FakeSink>(state), options);
  for (int i = 0; i < 3; ++i) reporter.enqueue(Report(i));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(reporter.stats().requests, 0u);  // still lingering
  for (int i = 3; i < 25; ++i) reporter.enqueue(Report(i));
  WaitForCall(*state, 2);  // two full batches went without a flush
  ASSERT_TRUE(reporter.flush(5s));
  std::lock_guard lock(state->mutex);
  ASSERT_EQ(state->attempts.size(), 3u);
  EXPECT_EQ(state->attempts[0].size(), 10u);
  EXPECT_EQ(state->attempts[1].size(), 10u);
  EXPECT_EQ(state->attempts[2].size(), 5u);
  EXPECT_EQ(state->acknowledged.size(), 25u);
}

TEST(RuntimeReporterTest, RetriesTransientFailuresWithoutLosingOrResendingAcknowledged) {
  auto state = std::make_shared<FakeSinkState>();
  state->failures_left = 3;
  state->gate_open = false;
  MetricsReporter reporter(std::make_unique<FakeSink>(state), FastOptions());
  reporter.enqueue(Report(1));
  WaitForCall(*state, 1);
  reporter.enqueue(Report(2));  // queued while {1} is in flight
  SetGate(*state, true);
  ASSERT_TRUE(reporter.flush(5s));
  reporter.enqueue(Report(3));
  ASSERT_TRUE(reporter.flush(5s));
  std::lock_guard lock(state->mutex);
  EXPECT_EQ(state->acknowledged, (std::vector<int64_t>{1, 2, 3}));
  // {1} was resent until acknowledged, and never after.
  using Batches = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(state->attempts, (Batches{{1}, {1}, {1}, {1}, {2}, {3}}));
  auto stats = reporter.stats();
  EXPECT_EQ(stats.retries, 3u);
  EXPECT_EQ(stats.requests, 6u);
  EXPECT_EQ(stats.acknowledged, 3u);
}

TEST(RuntimeReporterTest, FlushWaitsForTheAcknowledgement) {
  auto state = std::make_shared<FakeSinkState>();
  state->gate_open = false;
  MetricsReporter reporter(std::make_unique<FakeSink>(state), FastOptions());
  reporter.enqueue(Report(7));
  EXPECT_FALSE(reporter.flush(50ms));  // not acknowledged yet
  std::thread opener([&] {
    std::this_thread::sleep_for(100ms);
    SetGate(*state, true);
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(reporter.flush(5s));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 80ms);
  opener.join();
  std::lock_guard lock(state->mutex);
  EXPECT_EQ(state->acknowledged, (std::vector<int64_t>{7}));
}

TEST(RuntimeReporterTest, FlushTimesOutWhileTheMasterKeepsFailing) {
  auto state = std::make_shared<FakeSinkState>();
  state->failures_left = 1 << 30;
  auto options = FastOptions();
  options.close_timeout = 100ms;
  MetricsReporter reporter(std::make_unique<FakeSink>(state), options);
  reporter.enqueue(Report(1));
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(reporter.flush(100ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 90ms);
  EXPECT_GT(reporter.stats().retries, 3u);
}

TEST(RuntimeReporterTest, BackoffIsCapped) {
  auto state = std::make_shared<FakeSinkState>();
  state->failures_left = 1 << 30;
  auto options = FastOptions();
  options.initial_backoff = 1ms;
  options.max_backoff = 2ms;
  options.close_timeout = 10ms;
  MetricsReporter reporter(std::make_unique<FakeSink>(state), options);
  reporter.enqueue(Report(1));
  std::this_thread::sleep_for(300ms);
  // Uncapped doubling would allow only ~8 attempts in 300 ms.
  EXPECT_GT(reporter.stats().requests, 20u);
}

TEST(RuntimeReporterTest, RejectedBatchIsDroppedAndLaterReportsStillFlow) {
  auto state = std::make_shared<FakeSinkState>();
  state->failures_left = 1;
  state->failure = SendOutcome::kRejected;
  std::vector<std::string> warnings;
  auto options = FastOptions();
  options.warn = [&](const std::string& w) { warnings.push_back(w); };
  MetricsReporter reporter(std::make_unique<FakeSink>(state), options);
  reporter.enqueue(Report(1));
  EXPECT_FALSE(reporter.flush(5s));
  reporter.enqueue(Report(2));
  EXPECT_FALSE(reporter.flush(5s));  // report 1 was never acknowledged
  EXPECT_EQ(reporter.stats().dropped, 1u);
  EXPECT_EQ(warnings.size(), 1u);
  std::lock_guard lock(state->mutex);
  EXPECT_EQ(state->acknowledged, (std::vector<int64_t>{2}));
  EXPECT_EQ(state->attempts.size(), 2u);  // the rejected batch was not retried
}

TEST(RuntimeReporterTest, EndedAllocationStopsSending) {
  auto state = std::make_shared<FakeSinkState>();
  state->failures_left = 1;
  state->failure = SendOutcome::kAllocationEnded;
  MetricsReporter reporter(std::make_unique<FakeSink>(state), FastOptions());
  reporter.enqueue(Report(1));
  EXPECT_FALSE(reporter.flush(5s));
  EXPECT_TRUE(reporter.allocation_ended());
  reporter.enqueue(Report(2));
  reporter.enqueue(Report(3));
  EXPECT_FALSE(reporter.flush(1s));
  EXPECT_EQ(reporter.stats().dropped, 3u);
  std::lock_guard lock(state->mutex);
  EXPECT_EQ(state->attempts.size(), 1u);
  EXPECT_TRUE(state->acknowledged.empty());
}

TEST(RuntimeReporterTest, GivesUpAfterTheRetryBudgetAndDropsWhatIsLeft) {
  auto state = std::make_shared<FakeSinkState>();
  state->failures_left = 1000000;  // the master never comes back
  auto options = FastOptions();
  options.retry_for = 60ms;
  std::vector<std::string> warnings;
  std::mutex warnings_mutex;
  options.warn = [&](const std::string& w) {
    std::lock_guard lock(warnings_mutex);
    warnings.push_back(w);
  };
  MetricsReporter reporter(std::make_unique<FakeSink>(state), options);
  const auto start = std::chrono::steady_clock::now();
  reporter.enqueue(Report(1));
  reporter.enqueue(Report(2));
  EXPECT_FALSE(reporter.flush(5s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_TRUE(reporter.master_unreachable());
  EXPECT_FALSE(reporter.allocation_ended());
  reporter.enqueue(Report(3));  // dropped at once
  EXPECT_FALSE(reporter.flush(1s));
  EXPECT_EQ(reporter.stats().dropped, 3u);
  EXPECT_EQ(reporter.stats().acknowledged, 0u);
  {
    std::lock_guard lock(state->mutex);
    EXPECT_GE(state->attempts.size(), 3u) << "transient failures are retried until the budget is spent";
  }
  // The warning is written just after the reports are settled.
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard lock(warnings_mutex);
      if (!warnings.empty()) break;
    }
    std::this_thread::sleep_for(5ms);
  }
  std::lock_guard lock(warnings_mutex);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("did not acknowledge"), std::string::npos) << warnings[0];
}

TEST(RuntimeReporterTest, FullQueueBlocksThenThrows) {
  auto state = std::make_shared<FakeSinkState>();
  state->gate_open = false;
  auto options = FastOptions();
  options.max_queue = 2;
  options.enqueue_timeout = 50ms;
  options.close_timeout = 5s;
  {
    MetricsReporter reporter(std::make_unique<FakeSink>(state), options);
    reporter.enqueue(Report(0));
    WaitForCall(*state, 1);  // report 0 is in flight, the queue is empty
    reporter.enqueue(Report(1));
    reporter.enqueue(Report(2));
    EXPECT_THROW(reporter.enqueue(Report(3)), MetricsError);
    SetGate(*state, true);
  }  // the destructor drains what was queued
  std::lock_guard lock(state->mutex);
  EXPECT_EQ(state->acknowledged, (std::vector<int64_t>{0, 1, 2}));
}

TEST(RuntimeReporterTest, DestructorWaitsForAcknowledgements) {
  auto state = std::make_shared<FakeSinkState>();
  state->failures_left = 2;
  {
    MetricsReporter reporter(std::make_unique<FakeSink>(state), FastOptions());
    for (int i = 0; i < 10; ++i) reporter.enqueue(Report(i));
  }
  std::lock_guard lock(state->mutex);
  EXPECT_EQ(state->acknowledged.size(), 10u);
}

}  // namespace
}  // namespace ring::trial
