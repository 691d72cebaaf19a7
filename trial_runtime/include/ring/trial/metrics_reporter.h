#pragma once
// MetricsReporter: a bounded queue of metric reports drained by one background
// sender thread. The training thread enqueues (blocking only while the queue
// is full); the sender takes everything queued so far (up to max_batch) into
// one request, retries transient failures with capped exponential backoff,
// and resends a batch only until it is acknowledged (never after), for at most
// `retry_for`: then the master counts as unreachable and every report still
// queued is dropped. Reports are settled in the order they were queued.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "ring/trial/metrics_sink.h"

namespace ring::trial {

struct ReporterOptions {
  size_t max_queue = 10000;  // reports waiting to be sent
  size_t max_batch = 500;    // reports per request
  // How long the sender waits for more reports before it sends what it has:
  // a trial reporting every few milliseconds makes one request per linger,
  // not one per report. A full batch, flush() and the destructor send at once.
  std::chrono::milliseconds linger{100};
  std::chrono::milliseconds initial_backoff{100};    // first retry delay
  std::chrono::milliseconds max_backoff{10000};      // retry delay cap
  std::chrono::milliseconds enqueue_timeout{60000};  // how long a full queue may block a report
  std::chrono::milliseconds close_timeout{60000};    // how long the destructor waits for acks
  std::chrono::milliseconds retry_for{120000};       // how long one batch may keep failing
  // Where warnings go (dropped reports, ended allocation); stderr when empty.
  std::function<void(const std::string&)> warn;
};

// Counters for tests and diagnostics.
struct ReporterStats {
  uint64_t enqueued = 0;
  uint64_t acknowledged = 0;
  uint64_t dropped = 0;   // rejected by the master, or after the allocation ended
  uint64_t requests = 0;  // send() calls, including retries
  uint64_t retries = 0;
};

class MetricsReporter {
 public:
  explicit MetricsReporter(std::unique_ptr<MetricsSink> sink, ReporterOptions options = {});
  // Waits up to close_timeout for the queue to drain, then stops the sender.
  ~MetricsReporter();
  MetricsReporter(const MetricsReporter&) = delete;
  MetricsReporter& operator=(const MetricsReporter&) = delete;

  // Queues one report. Throws MetricsError when the queue stays full for
  // enqueue_timeout. After the allocation ended or the master was
  // unreachable for too long, reports are dropped.
  void enqueue(MetricReport report);

  // Waits until every report queued before this call was acknowledged or
  // dropped, or until the timeout. True when all of them were acknowledged.
  bool flush(std::chrono::milliseconds timeout);

  ReporterStats stats() const;
  bool allocation_ended() const;
  // A batch kept failing transiently for longer than retry_for.
  bool master_unreachable() const;

 private:
  void run();
  void warn(const std::string& message);

  std::unique_ptr<MetricsSink> sink_;  // used by the sender thread only
  const ReporterOptions options_;

  mutable std::mutex mutex_;         // guards everything below
  std::condition_variable changed_;  // queue, settled count or stop flag changed
  std::deque<MetricReport> queue_;
  uint64_t enqueued_ = 0;    // sequence number of the last queued report
  uint64_t settled_ = 0;     // reports acknowledged or dropped, in order
  uint64_t first_drop_ = 0;  // sequence number of the first dropped report (0: none)
  ReporterStats stats_;
  bool ended_ = false;        // the master said the allocation ended
  bool unreachable_ = false;  // the retry budget ran out; reports are dropped
  bool stopping_ = false;     // destructor: exit once the queue is empty
  bool abandon_ = false;      // destructor timed out: exit now
  int flushing_ = 0;          // flush() calls waiting: send without lingering

  std::thread sender_;  // last: starts after every member above exists
};

}  // namespace ring::trial
