// The data-moving collectives of ShmLocalGroup: allreduce, reduce-scatter,
// allgather and broadcast. Each walks the buffer in windows that alternate
// between the segment's two halves (shm_layout.h); the synchronisation and
// failure handling they share live in shm_local_group.cc.
//
// What costs time here is memory traffic between the cores, not arithmetic,
// so every step moves each byte as few times as it can:
//  - a rank copies into the segment only what other ranks read; what it
//    reduces itself it reads from its own buffer;
//  - a reduction reads every rank's operand where it lies (the own buffer or
//    a peer's slot) and writes the result straight to where it is wanted;
//  - small allreduces, allgather, reduce-scatter and broadcast need one
//    meeting of the ranks per window, a large allreduce two (operands
//    ready, results ready).
//
// Every reduction folds the local ranks' operands left in local rank order
// (ReduceOrdered), so an element's result does not depend on how a tensor
// is split into calls, on the window size or on which rank computed it.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "distributed/shm/shm_local_group.h"
#include "distributed/shm/shm_reduce.h"
#include "ring/trial/errors.h"

namespace ring::trial::shm {
namespace {

// Up to this many bytes (per window) an allreduce of two ranks copies the
// whole window in and lets each rank reduce all of it: one meeting instead
// of two, for the same bytes between the cores.
constexpr size_t kOneStepMaxBytes = size_t{256} << 10;
// With more ranks each would read every other rank's copy, so only small
// windows go in one step, where the second meeting costs more than the
// reading (most of all when ranks outnumber the cores and every meeting
// waits for ranks to be scheduled).
constexpr size_t kOneStepManyMaxBytes = size_t{64} << 10;

void CopyIfApart(std::byte* to, const std::byte* from, size_t bytes) {
  if (to != from) std::memcpy(to, from, bytes);
}

}  // namespace

void ShmLocalGroup::allreduce(void* data, size_t count, DataType type, ReduceOp op, Deadline deadline) {
  check_usable();
  if (size_ == 1 || count == 0) return;
  started_ = Clock::now();
  const size_t element = SizeOf(type);
  const size_t per_window = slot_bytes_ / element;
  auto* bytes = static_cast<std::byte*>(data);
  std::vector<const void*> sources(static_cast<size_t>(size_));
  for (size_t done = 0; done < count;) {
    const size_t n = std::min(per_window, count - done);
    const uint64_t g = window_++;
    std::byte* mine = bytes + done * element;
    wait_slots_free(g, deadline, "allreduce");
    if (n * element <= (size_ == 2 ? kOneStepMaxBytes : kOneStepManyMaxBytes)) {
      // Every rank reduces the whole window from every rank's copy.
      std::memcpy(slot(g, rank_), mine, n * element);
      signal(WrittenMark(g));
      wait_all(WrittenMark(g), deadline, "allreduce");
      for (int k = 0; k < size_; ++k)
        sources[static_cast<size_t>(k)] = k == rank_ ? static_cast<const void*>(mine) : slot(g, k);
      const std::array<void*, 1> outs = {mine};
      ReduceOrdered(outs, sources, n, type, op);
      done += n;
      continue;
    }
    // Each rank reduces its share of the window: the others' shares of this
    // rank's operand go into its slot, its own share it reads in place.
    for (int k = 0; k < size_; ++k) {
      if (k == rank_) continue;
      const auto [begin, end] = ShareOf(n, element, k, size_);
      std::memcpy(slot(g, rank_) + begin * element, mine + begin * element, (end - begin) * element);
    }
    signal(WrittenMark(g));
    wait_all(WrittenMark(g), deadline, "allreduce");
    const auto [begin, end] = ShareOf(n, element, rank_, size_);
    if (begin < end) {
      for (int k = 0; k < size_; ++k)
        sources[static_cast<size_t>(k)] = (k == rank_ ? mine : slot(g, k)) + begin * element;
      // The result into this rank's buffer and, where the others fetch it,
      // into the unused own-share part of its slot.
      const std::array<void*, 2> outs = {mine + begin * element, slot(g, rank_) + begin * element};
      ReduceOrdered(outs, sources, end - begin, type, op);
    }
    signal(DoneMark(g));
    wait_all(DoneMark(g), deadline, "allreduce");
    for (int k = 0; k < size_; ++k) {
      if (k == rank_) continue;
      const auto [kb, ke] = ShareOf(n, element, k, size_);
      std::memcpy(mine + kb * element, slot(g, k) + kb * element, (ke - kb) * element);
    }
    done += n;
  }
}

void ShmLocalGroup::reduce_scatter(const void* in, void* out, size_t count, DataType type, ReduceOp op,
                                   Deadline deadline) {
  check_usable();
  const size_t element = SizeOf(type);
  if (count == 0) return;
  const auto* from = static_cast<const std::byte*>(in);
  auto* to = static_cast<std::byte*>(out);
  if (size_ == 1) return CopyIfApart(to, from, count * element);
  started_ = Clock::now();
  // A window holds the same stretch of every block, block j at j * n.
  const size_t per_window = std::max<size_t>(1, slot_bytes_ / element / static_cast<size_t>(size_));
  std::vector<const void*> sources(static_cast<size_t>(size_));
  for (size_t done = 0; done < count;) {
    const size_t n = std::min(per_window, count - done);
    const uint64_t g = window_++;
    wait_slots_free(g, deadline, "reduce-scatter");
    for (int j = 0; j < size_; ++j) {
      if (j == rank_) continue;
      std::memcpy(slot(g, rank_) + static_cast<size_t>(j) * n * element,
                  from + (static_cast<size_t>(j) * count + done) * element, n * element);
    }
    signal(WrittenMark(g));
    wait_all(WrittenMark(g), deadline, "reduce-scatter");
    for (int k = 0; k < size_; ++k)
      sources[static_cast<size_t>(k)] = k == rank_
                                            ? from + (static_cast<size_t>(rank_) * count + done) * element
                                            : slot(g, k) + static_cast<size_t>(rank_) * n * element;
    const std::array<void*, 1> outs = {to + done * element};
    ReduceOrdered(outs, sources, n, type, op);
    done += n;
  }
}

void ShmLocalGroup::allgather(const void* in, void* out, size_t count, DataType type, Deadline deadline) {
  check_usable();
  const size_t element = SizeOf(type);
  if (count == 0) return;
  const auto* from = static_cast<const std::byte*>(in);
  auto* to = static_cast<std::byte*>(out);
  if (size_ == 1) return CopyIfApart(to, from, count * element);
  started_ = Clock::now();
  const size_t per_window = slot_bytes_ / element;
  for (size_t done = 0; done < count;) {
    const size_t n = std::min(per_window, count - done);
    const uint64_t g = window_++;
    wait_slots_free(g, deadline, "allgather");
    std::memcpy(slot(g, rank_), from + done * element, n * element);
    signal(WrittenMark(g));
    wait_all(WrittenMark(g), deadline, "allgather");
    for (int k = 0; k < size_; ++k) {
      std::byte* part = to + (static_cast<size_t>(k) * count + done) * element;
      if (k == rank_)
        CopyIfApart(part, from + done * element, n * element);
      else
        std::memcpy(part, slot(g, k), n * element);
    }
    done += n;
  }
}

void ShmLocalGroup::broadcast(void* data, size_t count, DataType type, int root, Deadline deadline) {
  check_usable();
  if (root < 0 || root >= size_)
    throw CollectiveError("local broadcast: root " + std::to_string(root) + " is not a local rank of " +
                          std::to_string(size_));
  if (size_ == 1 || count == 0) return;
  started_ = Clock::now();
  const size_t element = SizeOf(type);
  // Only the root writes, so a window is a whole half (every rank's slot).
  const size_t per_window = slot_bytes_ * static_cast<size_t>(size_) / element;
  auto* bytes = static_cast<std::byte*>(data);
  for (size_t done = 0; done < count;) {
    const size_t n = std::min(per_window, count - done);
    const uint64_t g = window_++;
    if (rank_ == root) {
      wait_slots_free(g, deadline, "broadcast");
      std::memcpy(slot(g, 0), bytes + done * element, n * element);
    }
    signal(WrittenMark(g));
    if (rank_ != root) {
      wait_rank(root, WrittenMark(g), deadline, "broadcast");
      std::memcpy(bytes + done * element, slot(g, 0), n * element);
    }
    done += n;
  }
}

}  // namespace ring::trial::shm
