#pragma once
// ShmLocalGroup: the ranks of one allocation on one agent (local ranks
// 0..L-1) and the shared-memory segment they run collectives through.
//
// Connect: local rank 0 (the leader) creates the segment under a fresh
// random name, publishes the name under "segment" in `store` (which the
// caller prefixes with something unique to this group instance), waits until
// every local rank has mapped it, and unlinks the name. With L == 1 there is
// no segment and every call returns at once.
//
// Collectives move data in windows of at most `slot_bytes` per rank through
// two alternating halves of the segment and synchronise with one progress
// counter per rank (atomics in the mapping; waits spin, yield, then sleep
// in futex_wait). In an allreduce each rank reduces its own share of the
// window, reading its own operand in place and the others' from their slots
// (shm_collectives.cc). Every reduction folds the operands left in local
// rank order, x0 + x1 + x2 + ..., element by element, so the bits of a
// result do not depend on the count, the offset or the window size.
// Every wait is bounded by the call's deadline; a rank that gives up marks
// the segment aborted, which makes the others fail at once instead of
// waiting for their own deadlines. After any failure the group is unusable.
//
// Used by one thread at a time; the local ranks must make the same calls in
// the same order with the same count and type.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "distributed/shm/shm_layout.h"
#include "distributed/shm/shm_segment.h"
#include "distributed/shm/shm_wait.h"
#include "ring/trial/distributed.h"
#include "ring/trial/kv_store.h"

namespace ring::trial::shm {

using Deadline = Clock::time_point;

struct ShmLocalOptions {
  int local_rank = 0;
  int local_world_size = 1;
  std::string tag = "local";            // readable part of the segment's name (allocation, group, agent)
  size_t slot_bytes = size_t{1} << 20;  // per rank and half: the largest window (multiple of 64)
  Timeout connect_timeout = std::chrono::minutes(5);
};

class ShmLocalGroup {
 public:
  // Throws RendezvousError when a local rank does not map the segment in
  // time (naming it) and ConfigError for inconsistent options.
  static std::unique_ptr<ShmLocalGroup> Connect(const ShmLocalOptions& options, KeyValueStore& store);
  ~ShmLocalGroup();
  ShmLocalGroup(const ShmLocalGroup&) = delete;
  ShmLocalGroup& operator=(const ShmLocalGroup&) = delete;

  int local_rank() const { return rank_; }
  int local_world_size() const { return size_; }
  bool is_leader() const { return rank_ == 0; }
  // The segment's name ("" with one local rank); already unlinked.
  const std::string& segment_name() const;

  // The reduction (kAverage reduces as kSum) of every local rank's `data`
  // into the leader's `data`; the others' `data` is left unchanged.
  void reduce_to_leader(void* data, size_t count, DataType type, ReduceOp op, Deadline deadline);
  // The reduction into every local rank's `data` (one pass: each rank
  // copies the reduced windows out itself).
  void allreduce(void* data, size_t count, DataType type, ReduceOp op, Deadline deadline);
  // `in` holds size() blocks of `count`; block r of the reduction over every
  // local rank into local rank r's `out` (kAverage reduces as kSum).
  void reduce_scatter(const void* in, void* out, size_t count, DataType type, ReduceOp op, Deadline deadline);
  // Every local rank's `count` elements into `out` (size() * count), in local
  // rank order.
  void allgather(const void* in, void* out, size_t count, DataType type, Deadline deadline);
  // Local rank `root`'s `data` into every local rank's `data`.
  void broadcast(void* data, size_t count, DataType type, int root, Deadline deadline);
  void barrier(Deadline deadline);
  // Makes every local rank's pending and later calls fail with `why`.
  void abort(const std::string& why);

 private:
  ShmLocalGroup(int rank, int size, std::optional<ShmSegment> segment);

  std::byte* slot(uint64_t window, int rank) const;
  ShmRankWords& words(int rank) const;
  void signal(uint32_t mark);
  void wait_rank(int rank, uint32_t mark, Deadline deadline, const char* what);
  void wait_all(uint32_t mark, Deadline deadline, const char* what);
  void wait_slots_free(uint64_t window, Deadline deadline, const char* what);
  [[noreturn]] void fail_wait(uint32_t mark, const std::vector<int>& waited_for, bool timed_out,
                              const char* what, Deadline deadline);
  void check_usable() const;

  const int rank_;
  const int size_;
  std::optional<ShmSegment> segment_;
  ShmHeader* header_ = nullptr;
  ShmRankWords* ranks_ = nullptr;
  std::byte* data_ = nullptr;
  size_t slot_bytes_ = 0;
  WaitStyle wait_style_ = WaitStyle::kYield;  // kSpin when every local rank can have a core
  uint64_t window_ = 0;                       // the next window; the same on every local rank
  std::string broken_;                        // why the group is unusable, empty while it works
  Clock::time_point started_;                 // of the current call, for timeout messages
};

}  // namespace ring::trial::shm
