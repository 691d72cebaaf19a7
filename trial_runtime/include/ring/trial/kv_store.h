#pragma once
// Key-value stores that ranks rendezvous through. In a cluster the master
// keeps one per allocation (scoped to it and its token, dropped when it
// ends); tests and local runs use an in-memory or a file store. Keys are
// ASCII [A-Za-z0-9._:/-], at most 256 bytes; values at most 4 MiB. A key may
// be set again (the last value wins).
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ring::trial {

class Context;

class KeyValueStore {
 public:
  using Bytes = std::vector<uint8_t>;
  virtual ~KeyValueStore() = default;

  // Throws RendezvousError when the store cannot be reached (the master's
  // store: AllocationEndedError once the master ended the allocation).
  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Waits up to `timeout` for the key. Throws RendezvousError on timeout
  // (naming the key) or when the store cannot be reached.
  virtual Bytes get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  // Whether every key is set now, without waiting.
  virtual bool check(const std::vector<std::string>& keys) = 0;
};

// The master's store of this trial's allocation (cluster mode); an in-memory
// one in local mode.
std::shared_ptr<KeyValueStore> AllocationStore(const Context& ctx);
// The master's store of an allocation, reached directly (tests, tools).
std::shared_ptr<KeyValueStore> MasterStore(const std::string& master_url, const std::string& allocation_id,
                                           const std::string& token);
// Shared by the threads of one process.
std::shared_ptr<KeyValueStore> InMemoryStore();
// Shared by processes that see `dir` (one host or a shared file system).
std::shared_ptr<KeyValueStore> FileStore(const std::string& dir);
// Every key of `inner` under "<prefix>/".
std::shared_ptr<KeyValueStore> PrefixStore(std::shared_ptr<KeyValueStore> inner, const std::string& prefix);

}  // namespace ring::trial
