// InMemoryStore: a map under one mutex; get() sleeps on a condition variable
// that every set() wakes. Shared by the threads of one process.
#include <condition_variable>
#include <map>
#include <mutex>

#include "distributed/store_keys.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"

namespace ring::trial {
namespace {

class MemoryStore final : public KeyValueStore {
 public:
  void set(const std::string& key, const Bytes& value) override {
    detail::CheckKey(key);
    detail::CheckValue(key, value);
    {
      std::lock_guard lock(mu_);
      values_[key] = value;
    }
    set_.notify_all();
  }

  Bytes get(const std::string& key, std::chrono::milliseconds timeout) override {
    detail::CheckKey(key);
    std::unique_lock lock(mu_);
    if (!set_.wait_for(lock, timeout, [&] { return values_.count(key) > 0; }))
      throw RendezvousError("rendezvous key " + key + " was not set within " +
                            detail::DescribeTimeout(timeout));
    return values_.at(key);
  }

  bool check(const std::vector<std::string>& keys) override {
    for (const auto& key : keys) detail::CheckKey(key);
    std::lock_guard lock(mu_);
    for (const auto& key : keys)
      if (!values_.count(key)) return false;
    return true;
  }

 private:
  std::mutex mu_;  // guards values_
  std::condition_variable set_;
  std::map<std::string, Bytes> values_;
};

}  // namespace

std::shared_ptr<KeyValueStore> InMemoryStore() {
  return std::make_shared<MemoryStore>();
}

}  // namespace ring::trial
