#pragma once
// The rendezvous key-value stores of running allocations: the ranks of one
// allocation exchange addresses and ids through them
// (/api/v1/allocations/{id}/rendezvous). One store per open allocation, in
// master memory only: opened when the allocation is assigned, dropped (and
// its waiters woken) when it ends. Thread-safe: mu_ guards everything; a
// waiter's wake callback runs after mu_ is released, on the thread that set
// the key or closed the allocation, and must only post work elsewhere.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace ring {

struct RendezvousLimits {
  size_t max_key_bytes = 256;                // keys are [A-Za-z0-9._:/-]{1,max_key_bytes}
  size_t max_value_bytes = 4u << 20;         // one value
  size_t max_keys = 10000;                   // keys per allocation
  size_t max_total_bytes = 64u << 20;        // keys plus values per allocation
  size_t max_waiters_per_allocation = 4096;  // concurrent waiting reads per allocation
};

class RendezvousStore {
 public:
  using Value = std::shared_ptr<const std::string>;
  using Waker = std::function<void()>;
  using WaitId = uint64_t;

  // A read: the value when set; otherwise `wait` names the registered waiter
  // (0 when none was asked for).
  struct Lookup {
    Value value;
    WaitId wait = 0;
  };
  struct Check {
    std::vector<std::string> set;
    std::vector<std::string> missing;
  };

  explicit RendezvousStore(RendezvousLimits limits = {});

  // An allocation's store exists from Open to Close; calls for an allocation
  // that is not open get kConflict ("has ended"). Opening twice keeps the keys.
  void Open(const std::string& allocation_id);
  // Drops the allocation's keys and wakes all of its waiters.
  void Close(const std::string& allocation_id);
  bool IsOpen(const std::string& allocation_id) const;

  // Sets (or replaces) `key` and wakes the waiters of that key.
  Status Set(const std::string& allocation_id, const std::string& key, std::string value);
  // The value of `key`. When it is not set and `wake` is given, registers
  // `wake` to be called once, when the key is set or the allocation closes;
  // cancel it with CancelWait when the wait ends another way.
  Result<Lookup> Get(const std::string& allocation_id, const std::string& key, Waker wake = nullptr);
  void CancelWait(const std::string& allocation_id, WaitId wait);
  // Which of `keys` are set, in the given order; never waits.
  Result<Check> CheckKeys(const std::string& allocation_id, const std::vector<std::string>& keys) const;

  // kInvalidArgument naming the key when it is not a valid key.
  Status ValidateKey(const std::string& key) const;
  const RendezvousLimits& limits() const { return limits_; }

  // For tests and diagnostics.
  size_t KeyCount(const std::string& allocation_id) const;
  size_t WaiterCount(const std::string& allocation_id) const;
  size_t OpenCount() const;

 private:
  struct Waiter {
    std::string key;
    Waker wake;
  };
  struct Keys {
    std::map<std::string, Value> values;
    size_t bytes = 0;                  // keys plus values
    std::map<WaitId, Waiter> waiters;  // by id, in registration order
  };
  Result<Keys*> FindLocked(const std::string& allocation_id);
  Result<const Keys*> FindLocked(const std::string& allocation_id) const;

  const RendezvousLimits limits_;
  mutable std::mutex mu_;             // guards everything below
  std::map<std::string, Keys> open_;  // by allocation id
  WaitId next_wait_ = 1;
};

}  // namespace ring
