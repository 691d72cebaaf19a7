#include "agent/outbound_queue.h"

#include <cassert>

namespace ring {

void OutboundQueue::Push(const proto::Message& message) {
  Item item;
  item.frame = proto::Encode(message);
  const auto* batch = std::get_if<proto::LogBatch>(&message);
  // A terminal's output is dropped like a log's when the master lags: a
  // shell printing without end must not grow the agent without bound.
  if (batch || std::holds_alternative<proto::TerminalOutput>(message)) {
    item.is_log = true;
    item.lines = batch ? batch->lines.size() : 0;
    log_bytes_ += item.frame.size();
    ++log_batches_;
  }
  items_.push_back(std::move(item));
  while (log_batches_ > 0 && (log_bytes_ > max_log_bytes_ || log_batches_ > max_log_batches_)) {
    size_t before = log_batches_;
    DropOldestLog();
    if (log_batches_ == before) break;  // only the in-flight batch is left
  }
}

void OutboundQueue::DropOldestLog() {
  size_t first = front_in_flight_ ? 1 : 0;
  for (size_t i = first; i < items_.size(); ++i) {
    if (!items_[i].is_log) continue;
    log_bytes_ -= items_[i].frame.size();
    --log_batches_;
    ++dropped_batches_;
    dropped_lines_ += items_[i].lines;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
}

std::string OutboundQueue::BeginFront() {
  assert(!items_.empty());
  front_in_flight_ = true;
  return items_.front().frame;
}

void OutboundQueue::EndFront(bool sent) {
  front_in_flight_ = false;
  if (!sent || items_.empty()) return;
  if (items_.front().is_log) {
    log_bytes_ -= items_.front().frame.size();
    --log_batches_;
  }
  items_.pop_front();
}

}  // namespace ring
