#pragma once
// Rendezvous of the ranks of one process group through a key-value store:
// every rank publishes where it runs under "<group>/rank/<r>" and waits for
// every other rank's record.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/kv_store.h"

namespace ring::trial::detail {

// One rank's record: where it runs and the address its host is reached at.
struct RankRecord {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string agent_id;
  std::string address;
  int64_t pid = 0;
  std::string nonce;  // tells apart two processes started with the same rank
};

// Throws ConfigError unless `self` is a rank of its world with an address.
void CheckRankInfo(const RankInfo& self);

// Publishes `self` in `store` and returns every rank's record, by rank.
// Throws RendezvousError naming the ranks that did not arrive by `deadline`
// (`timeout` is what the caller asked for, for the message), when ranks
// disagree on the world size, or when two processes claim one rank; and
// ConfigError when this group name was already used in `store`.
std::vector<RankRecord> Rendezvous(const RankInfo& self, KeyValueStore& store, const std::string& group,
                                   std::chrono::steady_clock::time_point deadline, Timeout timeout);

// "rank 3", "ranks 2 and 3", "ranks 0, 2-5 and 7".
std::string DescribeRanks(const std::vector<int>& ranks);

}  // namespace ring::trial::detail
