#include "ring/trial/metrics_reporter.h"

#include <algorithm>
#include <iostream>
#include <vector>

#include "ring/trial/errors.h"

namespace ring::trial {

const char* MetricKindName(MetricKind kind) {
  return kind == MetricKind::kValidation ? "validation" : "training";
}

MetricsReporter::MetricsReporter(std::unique_ptr<MetricsSink> sink, ReporterOptions options)
    : sink_(std::move(sink)), options_(std::move(options)), sender_([this] { run(); }) {}

MetricsReporter::~MetricsReporter() {
  if (!flush(options_.close_timeout)) {
    auto s = stats();
    if (s.enqueued > s.acknowledged + s.dropped)
      warn("gave up waiting for the master to acknowledge " +
           std::to_string(s.enqueued - s.acknowledged - s.dropped) + " metric report(s)");
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    abandon_ = true;  // the flush above already waited as long as allowed
  }
  changed_.notify_all();
  sender_.join();
}

void MetricsReporter::enqueue(MetricReport report) {
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, options_.enqueue_timeout,
                         [&] { return queue_.size() < options_.max_queue || ended_ || unreachable_; })) {
    throw MetricsError("metrics queue stayed full (" + std::to_string(options_.max_queue) + " reports) for " +
                       std::to_string(options_.enqueue_timeout.count()) +
                       " ms: the master is not acknowledging reports");
  }
  ++enqueued_;
  ++stats_.enqueued;
  if (ended_ || unreachable_) {
    ++stats_.dropped;
    ++settled_;
    if (first_drop_ == 0) first_drop_ = enqueued_;
    return;
  }
  queue_.push_back(std::move(report));
  lock.unlock();
  changed_.notify_all();
}

bool MetricsReporter::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const uint64_t target = enqueued_;
  ++flushing_;
  changed_.notify_all();  // a lingering sender sends now
  bool done = changed_.wait_for(lock, timeout, [&] { return settled_ >= target; });
  --flushing_;
  return done && (first_drop_ == 0 || first_drop_ > target);
}

ReporterStats MetricsReporter::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

bool MetricsReporter::allocation_ended() const {
  std::lock_guard lock(mutex_);
  return ended_;
}

bool MetricsReporter::master_unreachable() const {
  std::lock_guard lock(mutex_);
  return unreachable_;
}

void MetricsReporter::warn(const std::string& message) {
  if (options_.warn) {
    options_.warn(message);
  } else {
    std::cerr << "[ring.trial] " << message << std::endl;
  }
}

// Sender thread: takes what is queued (after lingering for more), sends it
// until it is settled, repeats.
void MetricsReporter::run() {
  std::vector<MetricReport> batch;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      changed_.wait_for(lock, options_.linger,
                        [&] { return stopping_ || flushing_ > 0 || queue_.size() >= options_.max_batch; });
      if (queue_.empty() || abandon_) return;
      size_t n = std::min(queue_.size(), options_.max_batch);
      batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
      queue_.erase(queue_.begin(), queue_.begin() + n);
    }
    changed_.notify_all();  // room in the queue for a blocked producer

    auto backoff = options_.initial_backoff;
    const auto give_up = std::chrono::steady_clock::now() + options_.retry_for;
    SendResult result;
    bool gave_up = false;
    for (;;) {
      result = sink_->send(batch);
      std::unique_lock lock(mutex_);
      ++stats_.requests;
      if (result.outcome != SendOutcome::kTransientFailure) break;
      if (std::chrono::steady_clock::now() + backoff > give_up) {
        gave_up = true;
        break;
      }
      ++stats_.retries;
      if (changed_.wait_for(lock, backoff, [&] { return abandon_; })) return;
      backoff = std::min(backoff * 2, options_.max_backoff);
    }

    std::string warning;
    {
      std::lock_guard lock(mutex_);
      const uint64_t first_seq = settled_ + 1;
      settled_ += batch.size();
      if (result.outcome == SendOutcome::kAcknowledged) {
        stats_.acknowledged += batch.size();
      } else {
        stats_.dropped += batch.size();
        if (first_drop_ == 0) first_drop_ = first_seq;
        if (result.outcome == SendOutcome::kAllocationEnded || gave_up) {
          (gave_up ? unreachable_ : ended_) = true;
          stats_.dropped += queue_.size();
          settled_ += queue_.size();
          queue_.clear();
          warning = gave_up ? "the master did not acknowledge metrics for " +
                                  std::to_string(options_.retry_for.count()) + " ms (" + result.message +
                                  "); further reports are dropped"
                            : "the master no longer accepts metrics from this allocation (" + result.message +
                                  "); further reports are dropped";
        } else {
          warning =
              "the master rejected " + std::to_string(batch.size()) + " metric report(s): " + result.message;
        }
      }
    }
    changed_.notify_all();
    if (!warning.empty()) warn(warning);
    batch.clear();
  }
}

}  // namespace ring::trial
