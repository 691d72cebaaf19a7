#pragma once
// What a backend gets to connect a process group once every rank arrived at
// the rendezvous. Backends are listed by name in process_group.cc.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "distributed/rendezvous.h"
#include "ring/trial/distributed.h"
#include "ring/trial/kv_store.h"

namespace ring::trial::detail {

struct GroupPlan {
  std::string name;  // ProcessGroupOptions::name
  RankInfo self;
  std::vector<RankRecord> ranks;                   // every rank's record, by rank
  std::shared_ptr<KeyValueStore> store;            // for the backend's own keys, scoped to this group
  std::chrono::steady_clock::time_point deadline;  // of the rendezvous, which connecting is part of
  Timeout timeout;                                 // the rendezvous timeout asked for (for messages)
};

using BackendConnector = std::unique_ptr<ProcessGroup> (*)(const GroupPlan& plan);

std::unique_ptr<ProcessGroup> ConnectGloo(const GroupPlan& plan);
std::unique_ptr<ProcessGroup> ConnectSingle(const GroupPlan& plan);

}  // namespace ring::trial::detail
