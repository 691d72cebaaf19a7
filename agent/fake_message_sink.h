#pragma once
// A MessageSink for unit tests: records every message, thread-safe, and lets
// a test wait for a condition on what was recorded.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

#include "agent/message_sink.h"

namespace ring {

class FakeMessageSink : public MessageSink {
 public:
  void Send(proto::Message message) override {
    std::lock_guard lock(mutex_);
    messages_.push_back(std::move(message));
    changed_.notify_all();
  }

  std::vector<proto::Message> messages() const {
    std::lock_guard lock(mutex_);
    return messages_;
  }

  // Waits until `pred(messages)` holds; false on timeout.
  bool WaitFor(const std::function<bool(const std::vector<proto::Message>&)>& pred,
               std::chrono::milliseconds timeout = std::chrono::seconds(5)) const {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return pred(messages_); });
  }

  std::vector<proto::StateChange> states() const {
    std::vector<proto::StateChange> out;
    for (const auto& m : messages())
      if (auto* s = std::get_if<proto::StateChange>(&m)) out.push_back(*s);
    return out;
  }

  std::vector<proto::LogBatch> logs() const {
    std::vector<proto::LogBatch> out;
    for (const auto& m : messages())
      if (auto* l = std::get_if<proto::LogBatch>(&m)) out.push_back(*l);
    return out;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<proto::Message> messages_;
};

}  // namespace ring
