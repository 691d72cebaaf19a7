#pragma once
// Averages gradients over the ranks of a process group in small pieces, the
// most urgent first, so that the next training step can start while the
// rest is still on the wire (cross-step overlap, after ByteScheduler and P3).
//
//   PriorityReducer reducer(*pg, flat, sizes);  // sizes[i]: parameter i's elements in `flat`
//   // backward:     reducer.mark_ready(i) as each gradient is final
//   // next forward: reducer.wait(i) before parameter i is used, apply its
//   //               update from the average, then reducer.release(i)
//
// Pieces. `flat` holds every gradient end to end in registration order and
// is cut into pieces of about piece_bytes: a larger gradient is split into
// equal pieces, smaller neighbours share one. Urgency is registration order:
// the first layers' gradients are final last in backward but are the first
// the next forward needs, so piece 0 goes before piece 1 whenever both are
// ready, and a later layer's remaining pieces wait while an earlier layer's
// are sent (preemption at piece granularity).
//
// Agreement. Every rank must run the same collectives in the same order,
// but gradients become ready at different moments on different ranks. Before
// each piece the ranks agree, with one small allreduce of their ready flags,
// on the most urgent piece ready everywhere, and then all-reduce that piece
// in place (ReduceOp::kAverage).
//
// Exactness. Every element is summed in an order that depends only on the
// ranks' values of it, whatever piece it lies in and whenever it is sent:
// where the group's allreduce guarantees that
// (ProcessGroup::allreduce_order_fixed(): gloo with two ranks, the
// hierarchical and shared-memory backends) a piece is one allreduce, and
// otherwise (gloo beyond two ranks) a reduce_scatter, which adds in rank
// order, and an allgather. So the averages are bit for bit those of the
// synchronous step on those backends.
//
// Threads. One background thread per reducer sends the pieces; mark_ready,
// wait and release come from the training thread. Between mark_ready(i) and
// release(i) gradient i belongs to the reducer (read it only after wait(i)).
#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/gradient_reducer.h"

namespace ring::trial {

// Opt-in compression of what goes on the wire: each rank sends its
// gradient, plus what rounding lost from it the step before (error
// feedback), as 16-bit floats, keeps the new rounding error, and the ranks'
// values are summed in float32 in rank order (an allgather of the 16-bit
// values: half the bytes of a float32 allreduce for two ranks). Not exact:
// the error feedback makes the rounding errors cancel over steps instead of
// adding up. bfloat16 keeps float32's range, float16 three more bits.
enum class GradientCompression { kNone, kFloat16, kBFloat16 };

struct PriorityReducerOptions {
  size_t piece_bytes = size_t{1} << 20;         // 1 MiB: 8 ms at 1 Gbit/s
  Timeout timeout = kDefaultCollectiveTimeout;  // per piece, and per agreement
  GradientCompression compression = GradientCompression::kNone;
};

// One piece: elements [offset, offset + elements) of the flat buffer,
// covering parameters first..last.
struct ReducerPiece {
  size_t offset = 0;
  size_t elements = 0;
  size_t first = 0;
  size_t last = 0;
};

// Summed over every piece sent so far.
struct PriorityReducerStats {
  uint64_t pieces = 0;
  uint64_t preemptions = 0;                // a piece sent ahead of a less urgent one that was ready before it
  std::chrono::nanoseconds agree_time{0};  // the background thread agreeing on the next piece
  std::chrono::nanoseconds reduce_time{0};  // the background thread inside the pieces' allreduces
  std::chrono::nanoseconds wait_time{0};    // the training thread blocked in wait()
};

class PriorityReducer {
 public:
  // `flat` must hold exactly the sum of `sizes` (none 0) and outlive the
  // reducer. Throws ReducerUsageError naming the parameter.
  PriorityReducer(ProcessGroup& group, std::span<float> flat, std::vector<size_t> sizes,
                  PriorityReducerOptions options = {});
  // Stops the background thread; a piece in flight ends first (at most the
  // collective timeout).
  ~PriorityReducer();
  PriorityReducer(const PriorityReducer&) = delete;
  PriorityReducer& operator=(const PriorityReducer&) = delete;

  // Gradient `index` is final for this step. Throws ReducerUsageError for an
  // unknown index or one marked and not yet released, CollectiveError once a
  // piece failed.
  void mark_ready(size_t index);
  // Blocks until gradient `index` holds its average over the group. Throws
  // ReducerUsageError when it was not marked, CollectiveError when a piece
  // failed or timed out (the reducer and the group are unusable after that).
  void wait(size_t index);
  // The average of gradient `index` was used; it may be marked again.
  void release(size_t index);
  // Whether gradient `index` is marked and not yet released.
  bool marked(size_t index) const;

  const std::vector<ReducerPiece>& pieces() const { return pieces_; }
  PriorityReducerStats totals() const;

 private:
  struct Worker;
  std::vector<ReducerPiece> pieces_;
  std::unique_ptr<Worker> worker_;
};

namespace detail {
// The pieces of `sizes` laid end to end (see "Pieces" above).
std::vector<ReducerPiece> PlanPieces(const std::vector<size_t>& sizes, size_t piece_bytes);
}  // namespace detail

}  // namespace ring::trial
