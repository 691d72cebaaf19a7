#pragma once
// Gloo's rendezvous store over one of ours. Gloo's keys (each rank's host
// name and pair addresses) go into the group's scope of the store; reads
// wait, but never past the rendezvous deadline. Used by the connecting
// thread only.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "ring/trial/distributed.h"
#include "ring/trial/kv_store.h"

namespace ring::trial::detail {

class GlooStore final : public gloo::rendezvous::Store {
 public:
  GlooStore(std::shared_ptr<KeyValueStore> store, std::string group,
            std::chrono::steady_clock::time_point deadline, Timeout timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  KeyValueStore::Bytes Read(const std::string& key, std::chrono::steady_clock::time_point until);

  std::shared_ptr<KeyValueStore> store_;
  std::string group_;
  std::chrono::steady_clock::time_point deadline_;
  Timeout timeout_;
};

}  // namespace ring::trial::detail
