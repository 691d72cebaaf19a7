#pragma once
// Waiting on words of the shared-memory segment: spin (200 us, or a few
// looks when ranks share cores), then yield the core until 2 ms have passed, then sleep in futex_wait
// (process-shared) in slices of at most 100 ms, always bounded by a
// deadline. Writers publish with Publish(), which only makes the wake-up
// system call when someone sleeps on the word.
#include <chrono>
#include <cstdint>

namespace ring::trial::shm {

using Clock = std::chrono::steady_clock;

enum class WaitResult { kReached, kTimedOut, kAborted };
// kSpin: each rank has a core of its own, so a waiter spins a while before
// it yields; kYield: ranks outnumber the cores, so it yields at once.
enum class WaitStyle { kSpin, kYield };

// Stores `value` into `word` and wakes the processes sleeping on it.
void Publish(uint32_t& word, uint32_t& waiters, uint32_t value);
// Wakes every process sleeping on `word` (used after an abort).
void WakeAll(uint32_t& word);
// Waits until `word` reaches `target` (modulo 2^32), `aborted` becomes
// non-zero, or `deadline` passes.
WaitResult WaitFor(uint32_t& word, uint32_t& waiters, uint32_t target, uint32_t& aborted,
                   Clock::time_point deadline, WaitStyle style = WaitStyle::kYield);
// kYield when `ranks` processes would outnumber the cores this process may
// run on (its affinity mask), else kSpin.
WaitStyle WaitStyleFor(int ranks);

}  // namespace ring::trial::shm
