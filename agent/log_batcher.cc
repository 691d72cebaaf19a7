#include "agent/log_batcher.h"

namespace ring {

std::optional<proto::LogBatch> LogBatcher::Add(proto::LogLine line, Clock::time_point now) {
  if (batch_.lines.empty()) oldest_ = now;
  bytes_ += line.line.size();
  batch_.lines.push_back(std::move(line));
  if (batch_.lines.size() >= kMaxLines || bytes_ >= kMaxBytes) return Take();
  return std::nullopt;
}

std::optional<proto::LogBatch> LogBatcher::TakeIfDue(Clock::time_point now) {
  if (batch_.lines.empty() || now < due()) return std::nullopt;
  return Take();
}

std::optional<proto::LogBatch> LogBatcher::Flush() {
  if (batch_.lines.empty()) return std::nullopt;
  return Take();
}

proto::LogBatch LogBatcher::Take() {
  proto::LogBatch out = std::move(batch_);
  out.allocation_id = allocation_id_;
  out.rank = rank_;
  out.seq = next_seq_++;
  batch_ = {};
  bytes_ = 0;
  return out;
}

}  // namespace ring
