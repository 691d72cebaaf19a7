#pragma once
// How the ranks of a group decide together, through its store, whether a
// step of connecting Gloo worked on every rank.
#include <string>
#include <vector>

#include "distributed/backend.h"
#include "ring/trial/kv_store.h"

namespace ring::trial::detail {

// Every rank reports what failed on it in `step` (empty: nothing); rank 0
// reads every report and publishes all of them under `step`, which every
// other rank reads: one read per rank, not one per pair of ranks. Returns
// every rank's failures, the same list on every rank. Throws
// RendezvousError when a rank has not reported by the rendezvous deadline.
std::vector<std::string> AgreeOn(KeyValueStore& store, const GroupPlan& plan, const std::string& step,
                                 const std::vector<std::string>& failures);

// Reads `key`, waiting until the rendezvous deadline; past it, throws
// RendezvousError saying that `missing` (e.g. "rank 2 did not publish ...").
KeyValueStore::Bytes ReadBeforeDeadline(KeyValueStore& store, const GroupPlan& plan, const std::string& key,
                                        const std::string& missing);

}  // namespace ring::trial::detail
