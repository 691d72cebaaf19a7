#pragma once
// Groups one process's output lines into `log` messages: a batch is cut at
// kMaxLines lines or kMaxBytes bytes, or once its oldest line is kMaxAge old.
// So at most one batch is buffered per process. Pure (time is passed in), not
// thread-safe: AllocationRunner guards it with a mutex.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/agent_protocol.h"

namespace ring {

class LogBatcher {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxLines = 100;
  static constexpr size_t kMaxBytes = 256 * 1024;
  static constexpr std::chrono::milliseconds kMaxAge{200};

  LogBatcher(std::string allocation_id, int rank) : allocation_id_(std::move(allocation_id)), rank_(rank) {}

  // Adds a line; returns the batch when this line filled it.
  std::optional<proto::LogBatch> Add(proto::LogLine line, Clock::time_point now);
  // Returns the batch when its oldest line is at least kMaxAge old at `now`.
  std::optional<proto::LogBatch> TakeIfDue(Clock::time_point now);
  // Returns whatever is buffered (end of the process).
  std::optional<proto::LogBatch> Flush();

  bool empty() const { return batch_.lines.empty(); }
  // When the buffered batch becomes due; only meaningful when !empty().
  Clock::time_point due() const { return oldest_ + kMaxAge; }
  int64_t next_seq() const { return next_seq_; }

 private:
  proto::LogBatch Take();

  std::string allocation_id_;
  int rank_;
  int64_t next_seq_ = 0;
  proto::LogBatch batch_;
  size_t bytes_ = 0;
  Clock::time_point oldest_;
};

}  // namespace ring
