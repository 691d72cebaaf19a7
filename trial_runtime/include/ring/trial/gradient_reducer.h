#pragma once
// Averages gradients over the ranks of a process group while the backward
// pass is still running, the way data-parallel training overlaps
// communication with computation.
//
//   BroadcastParameters(*pg, weights);                     // every rank starts from rank 0's weights
//   GradientReducer reducer(*pg, grads);                   // grads[i]: parameter i's gradient buffer
//   for (;;) {
//     Backward([&](size_t i) { reducer.mark_ready(i); });  // as each gradient becomes final
//     reducer.wait();                                      // grads now hold the average over ranks
//     Step();
//   }
//
// Buckets. Gradients become final roughly in reverse registration order, so
// parameters are grouped from the last one backwards into buckets of about
// bucket_bytes (a bucket is closed once it reaches the threshold; a larger
// parameter gets a bucket of its own). Bucket 0 holds the last parameters and
// closes early, at first_bucket_bytes, so the first allreduce starts while
// most of the backward pass is still ahead (the rule of PyTorch DDP).
// Buckets depend only on the gradient sizes and the threshold, so every rank
// that registers the same sizes reduces the same buckets in the same order.
//
// Threads. One background thread per reducer reduces buckets strictly in
// bucket order, each as soon as every parameter in it was marked ready, with
// one allreduce (ReduceOp::kAverage) per bucket. Within a bucket the
// gradients are laid end to end in registration order: when their buffers
// already lie that way in memory (or the bucket has one parameter) the
// allreduce runs on them in place, otherwise they are copied into the
// bucket's own buffer and the averages copied back, both on the background
// thread. From mark_ready(i) until wait() returns, gradient i belongs to the
// reducer: do not read or write it. While an iteration is in flight the
// process group belongs to the reducer too (a group is used by one thread at
// a time). mark_ready() and wait() may be called from any thread.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"

namespace ring::trial {

// The reducer or BroadcastParameters was used wrongly (a parameter marked
// twice or never, an unknown index, empty or overlapping buffers). The
// message names the parameter; nothing was changed by the failing call.
class ReducerUsageError : public TrialError {
 public:
  using TrialError::TrialError;
};

struct ReducerOptions {
  size_t bucket_bytes = size_t{25} << 20;  // 25 MiB, as PyTorch DDP
  // The first bucket (the last parameters, whose gradients are final first)
  // closes at min(first_bucket_bytes, bucket_bytes), so communication starts
  // early in the backward pass even when the whole model would fit in one
  // bucket; 1 MiB, as PyTorch DDP.
  size_t first_bucket_bytes = size_t{1} << 20;
  Timeout timeout = kDefaultCollectiveTimeout;  // per bucket allreduce
};

// One bucket: parameters first..last (registration indices, inclusive).
struct ReducerBucket {
  size_t first = 0;
  size_t last = 0;
  size_t elements = 0;
  bool in_place = false;  // reduced on the gradient buffers without copies
};

// Times of the last completed iteration, or summed over every completed
// iteration. wait_time close to 0 while reduce_time is large means the
// communication was hidden behind the backward pass; wait_time close to
// reduce_time + copy_time means none of it was.
struct ReducerStats {
  uint64_t iterations = 0;
  std::chrono::nanoseconds wait_time{0};    // the training thread blocked in wait()
  std::chrono::nanoseconds reduce_time{0};  // the background thread inside allreduce
  std::chrono::nanoseconds copy_time{0};    // the background thread packing and unpacking buckets
};

class GradientReducer {
 public:
  // `gradients` must not be empty, nor any of them, nor overlap; they must
  // outlive the reducer. Throws ReducerUsageError naming the parameter.
  GradientReducer(ProcessGroup& group, std::vector<std::span<float>> gradients, ReducerOptions options = {});
  // Stops the background thread; when a collective is in flight that waits
  // for it to end (at most the collective timeout).
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Gradient `index` is final for this iteration. Throws ReducerUsageError
  // for an unknown index or one already marked this iteration, and
  // CollectiveError once an allreduce failed.
  void mark_ready(size_t index);

  // Blocks until every bucket is reduced; the gradients then hold the
  // averages and the next iteration may start. Throws ReducerUsageError
  // (without waiting) naming the first parameter not marked ready, and
  // CollectiveError when a bucket's allreduce failed or timed out; the
  // reducer (like the group) is unusable after that.
  void wait();

  const std::vector<ReducerBucket>& buckets() const { return buckets_; }
  ReducerStats last_iteration() const;
  ReducerStats totals() const;

 private:
  struct Worker;
  std::vector<ReducerBucket> buckets_;
  std::unique_ptr<Worker> worker_;
};

// Root's values of `parameters` to every rank, in place, with few large
// broadcasts (packed up to 25 MiB at a time). Call on every rank with the
// same sizes. Throws ReducerUsageError for a root outside the group, and
// CollectiveError from the group.
void BroadcastParameters(ProcessGroup& group, const std::vector<std::span<float>>& parameters, int root = 0,
                         Timeout timeout = kDefaultCollectiveTimeout);

}  // namespace ring::trial
