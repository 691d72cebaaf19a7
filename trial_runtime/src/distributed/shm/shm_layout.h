#pragma once
// The layout of the shared-memory segment the ranks of one agent reduce
// through (ShmLocalGroup). Plain words live in the mapping and are only ever
// touched through std::atomic_ref, so every process sees the same atomics.
//
//   [ShmHeader][ShmRankWords x L][pad to 4 KiB][data: 2 halves x L slots x slot_bytes]
//
// Data is processed in windows of at most slot_bytes per rank; consecutive
// windows alternate halves, so a rank can fill the next window while the
// previous one is still being read.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace ring::trial::shm {

inline constexpr uint64_t kMagic = 0x52494e47'53484d31;  // "RINGSHM1"
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kCacheLine = 64;
inline constexpr size_t kPage = 4096;
inline constexpr size_t kAbortReasonBytes = 480;

static_assert(std::atomic_ref<uint32_t>::is_always_lock_free,
              "shared-memory sync needs lock-free 32-bit atomics");

// Written once by the leader before it publishes the segment's name.
struct ShmHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t local_world_size;
  uint64_t slot_bytes;
  uint64_t nonce;         // also part of the segment's name
  uint32_t aborted;       // 0, or 1 + the local rank that gave up first
  uint32_t reason_ready;  // 1 once `reason` is complete
  char reason[kAbortReasonBytes];
};

// One cache line per local rank. `counter` counts the rank's progress
// (2 per window: its part is written, then its part is done); `mapped` is 1
// once the rank has mapped the segment; `waiters` counts processes sleeping
// in futex_wait on one of this rank's words, so a writer only wakes when
// someone sleeps.
struct alignas(kCacheLine) ShmRankWords {
  uint32_t counter;
  uint32_t mapped;
  uint32_t waiters;
};

constexpr size_t AlignUp(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

constexpr size_t RanksOffset() {
  return AlignUp(sizeof(ShmHeader), kCacheLine);
}
constexpr size_t DataOffset(int local_world_size) {
  return AlignUp(RanksOffset() + sizeof(ShmRankWords) * static_cast<size_t>(local_world_size), kPage);
}
constexpr size_t SegmentBytes(int local_world_size, size_t slot_bytes) {
  return DataOffset(local_world_size) + 2 * static_cast<size_t>(local_world_size) * slot_bytes;
}

// [begin, end) of `count` elements that local rank `rank` of `size` reduces,
// in whole cache lines so no two ranks write the same line.
inline std::pair<size_t, size_t> ShareOf(size_t count, size_t element_bytes, int rank, int size) {
  const size_t per_line = kCacheLine / element_bytes;
  const size_t lines = (count + per_line - 1) / per_line;
  const size_t begin = lines * static_cast<size_t>(rank) / static_cast<size_t>(size) * per_line;
  const size_t end = lines * static_cast<size_t>(rank + 1) / static_cast<size_t>(size) * per_line;
  return {std::min(begin, count), std::min(end, count)};
}

// Counter values of window `g`: S1 once a rank's part is written, S2 once it
// is done reading. Compared modulo 2^32.
constexpr uint32_t WrittenMark(uint64_t g) {
  return static_cast<uint32_t>(2 * g + 1);
}
constexpr uint32_t DoneMark(uint64_t g) {
  return static_cast<uint32_t>(2 * g + 2);
}
constexpr bool Reached(uint32_t value, uint32_t target) {
  return static_cast<int32_t>(value - target) >= 0;
}

}  // namespace ring::trial::shm
