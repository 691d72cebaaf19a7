// PrefixStore: every key of the inner store under "<prefix>/", so that groups
// (and a backend's own keys) sharing one store cannot collide.
#include "distributed/store_keys.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"

namespace ring::trial {
namespace {

class ScopedStore final : public KeyValueStore {
 public:
  ScopedStore(std::shared_ptr<KeyValueStore> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(std::move(prefix) + "/") {}

  void set(const std::string& key, const Bytes& value) override { inner_->set(Scoped(key), value); }
  Bytes get(const std::string& key, std::chrono::milliseconds timeout) override {
    return inner_->get(Scoped(key), timeout);
  }
  bool check(const std::vector<std::string>& keys) override {
    std::vector<std::string> scoped;
    scoped.reserve(keys.size());
    for (const auto& key : keys) scoped.push_back(Scoped(key));
    return inner_->check(scoped);
  }

 private:
  std::string Scoped(const std::string& key) const {
    detail::CheckKey(key);  // names the key as the caller wrote it
    return prefix_ + key;
  }

  std::shared_ptr<KeyValueStore> inner_;
  std::string prefix_;
};

}  // namespace

std::shared_ptr<KeyValueStore> PrefixStore(std::shared_ptr<KeyValueStore> inner, const std::string& prefix) {
  if (!inner) throw RendezvousError("PrefixStore needs a store to scope");
  detail::CheckKey(prefix);
  return std::make_shared<ScopedStore>(std::move(inner), prefix);
}

}  // namespace ring::trial
