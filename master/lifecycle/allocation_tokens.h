#pragma once
// The tokens of live allocations, for authorising trial API calls on the
// network threads without waiting for the lifecycle: every trial call (the
// router's allocation check, rendezvous reads, metric reports) passes here
// first. Thread-safe (mu_). Written by Allocations as it starts and ends
// allocations; an allocation that is not live is looked up in the store
// (a read), so an ended one is told 409 and an unknown one 404.
#include <map>
#include <mutex>
#include <string>

#include "common/status.h"
#include "common/task_kind.h"

namespace ring {

class Store;

class AllocationTokens {
 public:
  explicit AllocationTokens(Store& store) : store_(store) {}
  // What a call of the allocation's trial needs to know once authorised.
  struct Holder {
    int64_t trial_id = 0;       // 0 for a task that is not a trial
    int64_t experiment_id = 0;  // 0 for a task that is not a trial
    TaskKind kind = TaskKind::kTrial;
    int64_t task_id = 0;
  };
  void Add(const std::string& allocation_id, const std::string& token_hash, Holder holder);
  void Remove(const std::string& allocation_id);
  // Ok with the holder when `token` is the token of live allocation
  // `allocation_id`; kUnauthenticated for a missing or wrong token,
  // kConflict for an ended allocation, kNotFound for none.
  Result<Holder> Authorize(const std::string& allocation_id, const std::string& token) const;
  // The same for the calls only a trial makes (metrics, checkpoints, the
  // searcher): another kind's token is kPermissionDenied.
  Result<Holder> AuthorizeTrial(const std::string& allocation_id, const std::string& token) const;
  // `text` with every token of a live allocation in it (a run of 64 hex
  // digits whose SHA-256 is a live token's) replaced by kHiddenToken: log
  // lines are readable by other users, and a trial that prints its
  // environment must not hand them its token. Only hashes are kept, so each
  // run of the right shape is hashed and compared.
  std::string Redact(std::string text) const;
  static constexpr const char* kHiddenToken = "[allocation token hidden]";
  // Whether the allocation is live (started and not ended): what a task
  // announced for the proxy lasts as long as this holds.
  bool Live(const std::string& allocation_id) const;

 private:
  struct Entry {
    std::string token_hash;
    Holder holder;
  };
  Store& store_;
  mutable std::mutex mu_;  // guards live_
  std::map<std::string, Entry> live_;
};

}  // namespace ring
