#pragma once
// Ranks as threads of one test process: each connects its own process group
// (real Gloo sockets on 127.0.0.1) through a shared store.
#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/kv_store.h"

namespace ring::testing {

// One rank per (pretend) host, so that "auto" means Gloo between all ranks.
inline trial::RankInfo LoopbackRank(int rank, int world_size) {
  trial::RankInfo self;
  self.rank = rank;
  self.world_size = world_size;
  self.local_rank = 0;
  self.local_world_size = 1;
  self.agent_id = "host-" + std::to_string(rank);
  self.address = "127.0.0.1";
  return self;
}

// Rank r of agents.size() ranks on agent agents[r] (every agent on
// 127.0.0.1); local ranks by order of appearance.
inline trial::RankInfo RankOnAgents(int r, const std::vector<std::string>& agents) {
  trial::RankInfo self;
  self.rank = r;
  self.world_size = static_cast<int>(agents.size());
  self.local_world_size = 0;
  for (size_t k = 0; k < agents.size(); ++k) {
    if (agents[k] != agents[static_cast<size_t>(r)]) continue;
    if (static_cast<int>(k) < r) ++self.local_rank;
    ++self.local_world_size;
  }
  self.agent_id = agents[static_cast<size_t>(r)];
  self.address = "127.0.0.1";
  return self;
}

// Runs body(rank) on `world` threads and joins them; an exception that
// escapes a body fails the test, naming the rank.
inline void RunThreads(int world, const std::function<void(int rank)>& body) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) {
    if (!errors[static_cast<size_t>(r)]) continue;
    try {
      std::rethrow_exception(errors[static_cast<size_t>(r)]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << r << " threw: " << e.what();
    }
  }
}

// Every rank connects a group through one in-memory store, then runs body.
inline void RunGroup(int world, const trial::ProcessGroupOptions& options,
                     const std::function<void(trial::ProcessGroup& group)>& body) {
  auto store = trial::InMemoryStore();
  RunThreads(world, [&](int rank) {
    auto group = trial::ConnectProcessGroup(LoopbackRank(rank, world), store, options);
    body(*group);
  });
}

}  // namespace ring::testing
