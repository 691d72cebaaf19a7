#pragma once
// A bound on a queue of slow work (password hashing): Enter gives a ticket
// while fewer than `limit` jobs are queued or running, and nothing past it,
// so a flood of sign-ins is answered 429 at once instead of waiting in an
// unbounded queue. Thread-safe; tickets may end on any thread.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

namespace ring {

class WorkGate {
 public:
  // `per_job`: about how long one job takes, to say how long to wait.
  WorkGate(int64_t limit, std::chrono::milliseconds per_job) : limit_(limit), per_job_(per_job) {}

  // Holds one place in the queue until destroyed.
  class Ticket {
   public:
    explicit Ticket(std::atomic<int64_t>& queued) : queued_(&queued) {}
    Ticket(Ticket&& other) noexcept : queued_(other.queued_) { other.queued_ = nullptr; }
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket() {
      if (queued_ != nullptr) queued_->fetch_sub(1);
    }

   private:
    std::atomic<int64_t>* queued_;
  };

  // A place in the queue, or null when it is full.
  std::unique_ptr<Ticket> Enter() {
    if (queued_.fetch_add(1) >= limit_) {
      queued_.fetch_sub(1);
      return nullptr;
    }
    return std::make_unique<Ticket>(queued_);
  }
  // Whole seconds until the queue, as full as it is now, has drained (at least 1).
  int64_t RetryAfterSeconds() const {
    const auto drain = per_job_ * queued_.load();
    return std::max<int64_t>(1, std::chrono::ceil<std::chrono::seconds>(drain).count());
  }
  int64_t limit() const { return limit_; }

 private:
  const int64_t limit_;
  const std::chrono::milliseconds per_job_;
  std::atomic<int64_t> queued_{0};
};

}  // namespace ring
