#include "distributed/shm/shm_local_group.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "distributed/shm/shm_reduce.h"
#include "ring/trial/errors.h"

namespace ring::trial::shm {
namespace {

std::string RankList(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "local rank " : "local ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

}  // namespace

ShmLocalGroup::ShmLocalGroup(int rank, int size, std::optional<ShmSegment> segment)
    : rank_(rank), size_(size), segment_(std::move(segment)) {
  if (!segment_) return;
  std::byte* base = segment_->data();
  header_ = reinterpret_cast<ShmHeader*>(base);
  ranks_ = reinterpret_cast<ShmRankWords*>(base + RanksOffset());
  data_ = base + DataOffset(size_);
  slot_bytes_ = header_->slot_bytes;
  wait_style_ = WaitStyleFor(size_);
}

ShmLocalGroup::~ShmLocalGroup() = default;

const std::string& ShmLocalGroup::segment_name() const {
  static const std::string kNone;
  return segment_ ? segment_->name() : kNone;
}

std::byte* ShmLocalGroup::slot(uint64_t window, int rank) const {
  const size_t index = (window & 1) * static_cast<size_t>(size_) + static_cast<size_t>(rank);
  return data_ + index * slot_bytes_;
}

ShmRankWords& ShmLocalGroup::words(int rank) const {
  return ranks_[rank];
}

void ShmLocalGroup::signal(uint32_t mark) {
  Publish(words(rank_).counter, words(rank_).waiters, mark);
}

void ShmLocalGroup::wait_rank(int rank, uint32_t mark, Deadline deadline, const char* what) {
  const WaitResult result =
      WaitFor(words(rank).counter, words(rank).waiters, mark, header_->aborted, deadline, wait_style_);
  if (result != WaitResult::kReached)
    fail_wait(mark, {rank}, result == WaitResult::kTimedOut, what, deadline);
}

void ShmLocalGroup::wait_all(uint32_t mark, Deadline deadline, const char* what) {
  for (int k = 0; k < size_; ++k) {
    if (k == rank_) continue;
    const WaitResult result =
        WaitFor(words(k).counter, words(k).waiters, mark, header_->aborted, deadline, wait_style_);
    if (result == WaitResult::kReached) continue;
    std::vector<int> all(static_cast<size_t>(size_));
    for (int i = 0; i < size_; ++i) all[static_cast<size_t>(i)] = i;
    fail_wait(mark, all, result == WaitResult::kTimedOut, what, deadline);
  }
}

// Before window `window` reuses the half of window - 2. Every rank finishes
// all it does with a window (copying results out included) before it marks
// the next window written, so once every rank marked window - 1 written,
// nobody touches window - 2 any more.
void ShmLocalGroup::wait_slots_free(uint64_t window, Deadline deadline, const char* what) {
  if (window >= 1) wait_all(WrittenMark(window - 1), deadline, what);
}

void ShmLocalGroup::fail_wait(uint32_t mark, const std::vector<int>& waited_for, bool timed_out,
                              const char* what, Deadline deadline) {
  std::string message;
  if (timed_out) {
    std::vector<int> missing;
    for (int k : waited_for)
      if (k != rank_ && !Reached(std::atomic_ref<uint32_t>(words(k).counter).load(), mark))
        missing.push_back(k);
    const auto waited = std::chrono::ceil<std::chrono::milliseconds>(deadline - started_).count();
    message = "local " + std::string(what) + " on local rank " + std::to_string(rank_) + " of " +
              std::to_string(size_) + ": " + RankList(missing) + " did not arrive within " +
              std::to_string(waited) + " ms";
    abort(message);
  } else {
    const uint32_t by = std::atomic_ref<uint32_t>(header_->aborted).load() - 1;
    std::string reason = "no reason given";
    if (std::atomic_ref<uint32_t>(header_->reason_ready).load(std::memory_order_acquire) == 1)
      reason.assign(header_->reason, strnlen(header_->reason, kAbortReasonBytes));
    message = "local " + std::string(what) + " on local rank " + std::to_string(rank_) + ": local rank " +
              std::to_string(by) + " gave up: " + reason;
  }
  broken_ = message;
  throw CollectiveError(message);
}

void ShmLocalGroup::abort(const std::string& why) {
  if (broken_.empty()) broken_ = why;
  if (!segment_) return;
  uint32_t expected = 0;
  if (std::atomic_ref<uint32_t>(header_->aborted)
          .compare_exchange_strong(expected, static_cast<uint32_t>(rank_) + 1)) {
    const size_t n = std::min(why.size(), kAbortReasonBytes - 1);
    std::memcpy(header_->reason, why.data(), n);
    header_->reason[n] = '\0';
    std::atomic_ref<uint32_t>(header_->reason_ready).store(1, std::memory_order_release);
  }
  for (int k = 0; k < size_; ++k) {
    WakeAll(words(k).counter);
    WakeAll(words(k).mapped);
  }
}

void ShmLocalGroup::check_usable() const {
  if (!broken_.empty()) throw CollectiveError("local group is unusable after an earlier failure: " + broken_);
}

void ShmLocalGroup::reduce_to_leader(void* data, size_t count, DataType type, ReduceOp op,
                                     Deadline deadline) {
  check_usable();
  if (size_ == 1 || count == 0) return;
  started_ = Clock::now();
  const size_t element = SizeOf(type);
  const size_t per_window = slot_bytes_ / element;
  auto* bytes = static_cast<std::byte*>(data);
  std::vector<const void*> sources(static_cast<size_t>(size_ - 1));
  for (size_t done = 0; done < count;) {
    const size_t n = std::min(per_window, count - done);
    const uint64_t g = window_++;
    wait_slots_free(g, deadline, "reduce");
    std::memcpy(slot(g, rank_), bytes + done * element, n * element);
    signal(WrittenMark(g));
    wait_all(WrittenMark(g), deadline, "reduce");
    const auto [begin, end] = ShareOf(n, element, rank_, size_);
    if (begin < end) {
      for (int k = 1; k < size_; ++k) sources[static_cast<size_t>(k - 1)] = slot(g, k) + begin * element;
      ReduceInto(slot(g, 0) + begin * element, sources, end - begin, type, op);
    }
    signal(DoneMark(g));
    if (rank_ == 0) {
      wait_all(DoneMark(g), deadline, "reduce");
      std::memcpy(bytes + done * element, slot(g, 0), n * element);
    }
    done += n;
  }
}

void ShmLocalGroup::barrier(Deadline deadline) {
  check_usable();
  if (size_ == 1) return;
  started_ = Clock::now();
  const uint64_t g = window_++;
  signal(WrittenMark(g));
  wait_all(WrittenMark(g), deadline, "barrier");
  signal(DoneMark(g));
}

}  // namespace ring::trial::shm
