#include "distributed/shm/shm_wait.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <ctime>

#include "distributed/shm/shm_layout.h"

namespace ring::trial::shm {
namespace {

// About a microsecond or two of spinning: ranks often share cores, so a
// waiter should yield its core to the rank it waits for soon.
constexpr int kSpins = 256;
constexpr auto kSleepSlice = std::chrono::milliseconds(100);

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

void FutexWait(uint32_t* word, uint32_t expected, Clock::duration timeout) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  timespec ts{.tv_sec = static_cast<time_t>(ns / 1'000'000'000),
              .tv_nsec = static_cast<long>(ns % 1'000'000'000)};
  // EAGAIN (value changed), EINTR and ETIMEDOUT all just mean "look again".
  syscall(SYS_futex, word, FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void FutexWake(uint32_t* word) {
  syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

void Publish(uint32_t& word, uint32_t& waiters, uint32_t value) {
  std::atomic_ref<uint32_t>(word).store(value, std::memory_order_seq_cst);
  if (std::atomic_ref<uint32_t>(waiters).load(std::memory_order_seq_cst) > 0) FutexWake(&word);
}

void WakeAll(uint32_t& word) {
  FutexWake(&word);
}

WaitResult WaitFor(uint32_t& word, uint32_t& waiters, uint32_t target, uint32_t& aborted,
                   Clock::time_point deadline) {
  std::atomic_ref<uint32_t> value(word);
  std::atomic_ref<uint32_t> abort_flag(aborted);
  for (int i = 0; i < kSpins; ++i) {
    if (Reached(value.load(std::memory_order_acquire), target)) return WaitResult::kReached;
    CpuRelax();
  }
  std::atomic_ref<uint32_t> sleepers(waiters);
  for (;;) {
    if (Reached(value.load(std::memory_order_seq_cst), target)) return WaitResult::kReached;
    if (abort_flag.load(std::memory_order_seq_cst) != 0) return WaitResult::kAborted;
    const auto now = Clock::now();
    if (now >= deadline) return WaitResult::kTimedOut;
    // Announce the sleeper before the last look, so that a writer either
    // sees it and wakes us or stored before that look (seq_cst order).
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = value.load(std::memory_order_seq_cst);
    if (!Reached(seen, target) && abort_flag.load(std::memory_order_seq_cst) == 0)
      FutexWait(&word, seen, std::min<Clock::duration>(deadline - now, kSleepSlice));
    sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace ring::trial::shm
