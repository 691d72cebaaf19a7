#include "ring/trial/gradient_reducer.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "training/bucket_plan.h"
#include "training/rank_order_average.h"

namespace ring::trial {
namespace {

using Clock = std::chrono::steady_clock;

ReducerStats& operator+=(ReducerStats& a, const ReducerStats& b) {
  a.iterations += b.iterations;
  a.wait_time += b.wait_time;
  a.reduce_time += b.reduce_time;
  a.copy_time += b.copy_time;
  return a;
}

std::string Describe(size_t k, const ReducerBucket& b) {
  return "bucket " + std::to_string(k) + " (parameters " + std::to_string(b.first) + ".." +
         std::to_string(b.last) + ", " + std::to_string(b.elements) + " floats)";
}

}  // namespace

// The iteration state shared by the training thread (mark_ready, wait) and
// the background thread (run), every mutable field guarded by mu.
struct GradientReducer::Worker {
  Worker(ProcessGroup& group, std::vector<std::span<float>> gradients,
         const std::vector<ReducerBucket>& buckets, const ReducerOptions& options)
      : group(group),
        gradients(std::move(gradients)),
        buckets(buckets),
        options(options),
        single(group.size() == 1),
        bucket_of(this->gradients.size()),
        fused(buckets.size()),
        ready(this->gradients.size(), false),
        pending(buckets.size()) {
    for (size_t k = 0; k < buckets.size(); ++k) {
      for (size_t i = buckets[k].first; i <= buckets[k].last; ++i) bucket_of[i] = k;
      pending[k] = buckets[k].last - buckets[k].first + 1;
      if (!buckets[k].in_place && !single) fused[k].resize(buckets[k].elements);
    }
    // One rank has nothing to reduce: its buckets are done once ready, on the
    // training thread, with no hand-off to a thread that would do nothing (a
    // futex wake each way per bucket and step, which cost up to 5% of a
    // single-rank trial's time).
    if (!single) thread = std::thread([this] { run(); });
  }

  ~Worker() {
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    cv.notify_all();
    if (thread.joinable()) thread.join();
  }

  // The background thread: buckets in order, each once all its parameters are ready.
  void run() {
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stopping || (done < buckets.size() && pending[done] == 0); });
      if (stopping) return;
      const size_t k = done;
      lock.unlock();
      std::string error;
      Clock::duration copy{0}, reduce{0};
      try {
        this->reduce(k, copy, reduce);
      } catch (const std::exception& e) {
        error = "gradient reducer: allreduce of " + Describe(k, buckets[k]) + " failed: " + e.what();
      }
      lock.lock();
      current.copy_time += copy;
      current.reduce_time += reduce;
      if (error.empty()) {
        ++done;
      } else {
        failure = error;
        done = buckets.size();  // abandon the iteration: the group is unusable
      }
      cv.notify_all();
    }
  }

  // Averages bucket k over the group (background thread, outside the lock).
  void reduce(size_t k, Clock::duration& copy, Clock::duration& reduce) {
    if (single) return;  // the average over one rank is what it already holds
    const ReducerBucket& b = buckets[k];
    auto started = Clock::now();
    if (b.in_place) {
      average(group, gradients[b.first].data(), b.elements, options.timeout);
      reduce += Clock::now() - started;
      return;
    }
    float* out = fused[k].data();
    for (size_t i = b.first; i <= b.last; ++i) out = std::copy(gradients[i].begin(), gradients[i].end(), out);
    const auto packed = Clock::now();
    copy += packed - started;
    average(group, fused[k].data(), b.elements, options.timeout);
    const auto reduced = Clock::now();
    reduce += reduced - packed;
    const float* in = fused[k].data();
    for (size_t i = b.first; i <= b.last; ++i) {
      std::memcpy(gradients[i].data(), in, gradients[i].size_bytes());
      in += gradients[i].size();
    }
    copy += Clock::now() - reduced;
  }

  ProcessGroup& group;
  const std::vector<std::span<float>> gradients;
  const std::vector<ReducerBucket>& buckets;
  const ReducerOptions options;
  const bool single;
  std::vector<size_t> bucket_of;
  std::vector<std::vector<float>> fused;  // per bucket not reduced in place; used by the background thread
  detail::RankOrderAverage average;       // background thread only

  std::mutex mu;
  std::condition_variable cv;
  std::vector<bool> ready;      // marked this iteration
  std::vector<size_t> pending;  // per bucket, parameters not yet ready
  size_t done = 0;              // buckets finished this iteration (all of them after a failure)
  std::string failure;          // the first allreduce failure; the reducer is unusable after it
  bool stopping = false;
  ReducerStats current, last, total;
  std::thread thread;  // last: started once everything above exists (none for one rank)
};

GradientReducer::GradientReducer(ProcessGroup& group, std::vector<std::span<float>> gradients,
                                 ReducerOptions options) {
  detail::CheckGradients(gradients, options.bucket_bytes);
  buckets_ = detail::PlanBuckets(gradients, options.first_bucket_bytes, options.bucket_bytes);
  worker_ = std::make_unique<Worker>(group, std::move(gradients), buckets_, options);
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::mark_ready(size_t index) {
  Worker& w = *worker_;
  std::lock_guard lock(w.mu);
  if (!w.failure.empty()) throw CollectiveError(w.failure + " (the reducer is unusable after that)");
  if (index >= w.ready.size())
    throw ReducerUsageError("gradient reducer: mark_ready(" + std::to_string(index) + "): there are only " +
                            std::to_string(w.ready.size()) + " parameters");
  if (w.ready[index])
    throw ReducerUsageError(
        "gradient reducer: parameter " + std::to_string(index) +
        " was already marked ready in this iteration (call wait() before marking it again)");
  w.ready[index] = true;
  if (--w.pending[w.bucket_of[index]] != 0) return;
  if (w.single)
    ++w.done;  // in any order: nothing waits for a bucket but wait(), for all of them
  else
    w.cv.notify_all();
}

void GradientReducer::wait() {
  Worker& w = *worker_;
  const auto started = Clock::now();
  std::unique_lock lock(w.mu);
  if (!w.failure.empty()) throw CollectiveError(w.failure);
  const auto missing = std::find(w.ready.begin(), w.ready.end(), false);
  if (missing != w.ready.end()) {
    const auto marked = std::count(w.ready.begin(), w.ready.end(), true);
    throw ReducerUsageError("gradient reducer: wait() before parameter " +
                            std::to_string(missing - w.ready.begin()) + " was marked ready (" +
                            std::to_string(marked) + " of " + std::to_string(w.ready.size()) + " are)");
  }
  w.cv.wait(lock, [&] { return w.done == buckets_.size(); });
  if (!w.failure.empty()) throw CollectiveError(w.failure);
  w.current.wait_time = Clock::now() - started;
  w.current.iterations = 1;
  w.last = w.current;
  w.total += w.current;
  w.current = {};
  std::fill(w.ready.begin(), w.ready.end(), false);
  for (size_t k = 0; k < buckets_.size(); ++k) w.pending[k] = buckets_[k].last - buckets_[k].first + 1;
  w.done = 0;
}

ReducerStats GradientReducer::last_iteration() const {
  std::lock_guard lock(worker_->mu);
  return worker_->last;
}

ReducerStats GradientReducer::totals() const {
  std::lock_guard lock(worker_->mu);
  return worker_->total;
}

}  // namespace ring::trial
