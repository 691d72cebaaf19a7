#pragma once
// How many large answers (streamed bodies: checkpoint downloads, backups,
// model definitions) the master sends at once: master.yaml
// max_streamed_answers. A slot is held by the answer's stream until it is
// written or the client goes; past the limit the route answers 503.
// Thread-safe (an atomic count).
#include <atomic>
#include <cstdint>
#include <memory>

namespace ring {

class StreamSlots {
 public:
  explicit StreamSlots(int64_t max) : max_(max), in_use_(std::make_shared<std::atomic<int64_t>>(0)) {}
  // A slot, held until the pointer and its copies go; null when all are taken.
  std::shared_ptr<void> TryTake() {
    int64_t now = in_use_->load();
    do {
      if (now >= max_) return nullptr;
    } while (!in_use_->compare_exchange_weak(now, now + 1));
    return std::shared_ptr<void>(in_use_.get(), [count = in_use_](void*) { count->fetch_sub(1); });
  }
  int64_t max() const { return max_; }
  int64_t in_use() const { return in_use_->load(); }

 private:
  const int64_t max_;
  std::shared_ptr<std::atomic<int64_t>> in_use_;
};

}  // namespace ring
