#include "distributed/shm/shm_wait.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <ctime>

#include "distributed/shm/shm_layout.h"

namespace ring::trial::shm {
namespace {

// A waiter spins, then offers its core with sched_yield, and only sleeps
// once the awaited rank has been away for milliseconds. A futex wake-up
// costs tens of microseconds on a virtual machine, more than a whole window
// of a collective takes, so sleeping soon made every step of a megabyte
// allreduce pay it (measured: about half its time). A window's step takes
// well under 200 us, so with a core per rank (WaitStyle::kSpin) the waiter
// spins that long before yielding: yielding earlier hands the core to
// unrelated work for a whole time slice. When ranks outnumber the cores
// (kYield) the rank waited for may need this very core, so the waiter
// yields after one round of looks (4 ranks on 2 cores: a 4 KiB allgather
// took 30 us spinning 5 us first, 8-10 us yielding at once).
constexpr auto kSpinWithCore = std::chrono::microseconds(200);
constexpr auto kSpinSharingCores = std::chrono::microseconds(0);
constexpr auto kSleepAfter = std::chrono::milliseconds(2);
constexpr int kLooksPerClockRead = 32;
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

WaitStyle WaitStyleFor(int ranks) {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  return ranks > cores ? WaitStyle::kYield : WaitStyle::kSpin;
}

void WakeAll(uint32_t& word) {
  FutexWake(&word);
}

WaitResult WaitFor(uint32_t& word, uint32_t& waiters, uint32_t target, uint32_t& aborted,
                   Clock::time_point deadline, WaitStyle style) {
  std::atomic_ref<uint32_t> value(word);
  std::atomic_ref<uint32_t> abort_flag(aborted);
  const auto start = Clock::now();
  for (;;) {
    for (int i = 0; i < kLooksPerClockRead; ++i) {
      if (Reached(value.load(std::memory_order_acquire), target)) return WaitResult::kReached;
      CpuRelax();
    }
    const auto spun = Clock::now() - start;
    if (abort_flag.load(std::memory_order_relaxed) != 0) break;
    if (spun >=
        (style == WaitStyle::kYield ? Clock::duration(kSpinSharingCores) : Clock::duration(kSpinWithCore)))
      break;
  }
  for (;;) {
    for (int i = 0; i < kLooksPerClockRead; ++i) {
      if (Reached(value.load(std::memory_order_acquire), target)) return WaitResult::kReached;
      sched_yield();
    }
    if (abort_flag.load(std::memory_order_relaxed) != 0) break;
    const auto now = Clock::now();
    if (now - start >= kSleepAfter || now >= deadline) break;
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
