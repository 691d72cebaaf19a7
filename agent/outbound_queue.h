#pragma once
// The bounded queue of state and log messages waiting for the master, kept
// across reconnects. When log batches (and terminal output, counted with
// them) exceed the byte or count bound the oldest is dropped; state
// messages are never dropped. The front may be
// "in flight" (being written) and is then never dropped. Not thread-safe:
// owned by MasterLink's strand.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include "common/agent_protocol.h"

namespace ring {

class OutboundQueue {
 public:
  OutboundQueue(size_t max_log_bytes, size_t max_log_batches)
      : max_log_bytes_(max_log_bytes), max_log_batches_(max_log_batches) {}

  // Encodes and appends `message` (StateChange or LogBatch; others are kept too, never dropped).
  void Push(const proto::Message& message);
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  // A copy of the encoded frame at the front (erasing may move items); marks it in flight.
  std::string BeginFront();
  // Ends the write of the front: removes it when sent, keeps it otherwise.
  void EndFront(bool sent);

  size_t log_bytes() const { return log_bytes_; }
  size_t log_batches() const { return log_batches_; }
  uint64_t dropped_batches() const { return dropped_batches_; }
  uint64_t dropped_lines() const { return dropped_lines_; }

 private:
  struct Item {
    bool is_log = false;
    size_t lines = 0;
    std::string frame;
  };
  void DropOldestLog();

  size_t max_log_bytes_;
  size_t max_log_batches_;
  std::deque<Item> items_;
  bool front_in_flight_ = false;
  size_t log_bytes_ = 0;
  size_t log_batches_ = 0;
  uint64_t dropped_batches_ = 0;
  uint64_t dropped_lines_ = 0;
};

}  // namespace ring
