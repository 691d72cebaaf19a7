#pragma once
// Proxied connections open at once per user (each holds a connection to a
// task's server): one more than `max_per_user` is refused. Thread-safe
// (shared state under a mutex); a slot gives its place back when destroyed,
// and may outlive the limits that issued it.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace ring {

class UserConnectionLimits {
  struct State {
    explicit State(uint32_t max) : max_per_user(max) {}
    const uint32_t max_per_user;
    std::mutex mu;                         // guards open
    std::map<std::string, uint32_t> open;  // no entry at 0
  };

 public:
  explicit UserConnectionLimits(uint32_t max_per_user) : state_(std::make_shared<State>(max_per_user)) {}

  class Slot {
   public:
    Slot(std::shared_ptr<State> state, std::string user) : state_(std::move(state)), user_(std::move(user)) {}
    Slot(Slot&& other) noexcept = default;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot();
    const std::string& user() const { return user_; }

   private:
    std::shared_ptr<State> state_;  // null once moved from
    std::string user_;
  };

  // A slot for one more connection of `user`, or nullopt at the limit.
  std::optional<Slot> Take(const std::string& user);
  uint32_t open(const std::string& user) const;
  uint32_t max_per_user() const { return state_->max_per_user; }

 private:
  std::shared_ptr<State> state_;
};

}  // namespace ring
