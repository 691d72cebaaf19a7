// ConnectProcessGroup: checks the request, runs the rendezvous, then hands
// the group to its backend. kBackends lists every backend of this build by
// name; "auto" picks one once every rank's record is known (ChooseBackend).
#include <array>
#include <cstring>
#include <string_view>
#include <vector>

#include "distributed/backend.h"
#include "distributed/collective_args.h"
#include "distributed/hierarchical/hierarchical_process_group.h"
#include "distributed/hierarchical/hierarchical_topology.h"
#include "distributed/nccl/nccl_process_group.h"
#include "distributed/rendezvous.h"
#include "distributed/store_keys.h"
#include "ring/trial/context.h"
#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"

namespace ring::trial {

void ProcessGroup::reduce_scatter(const void* in, void* out, size_t count, DataType type, ReduceOp op,
                                  Timeout timeout) {
  detail::CheckReduce(type, op);
  detail::CheckBuffer(in, count, "reduce_scatter");
  detail::CheckBuffer(out, count, "reduce_scatter");
  const size_t element = SizeOf(type);
  const size_t block = count * element;
  std::vector<std::byte> all(block * static_cast<size_t>(size()));
  if (count > 0) std::memcpy(all.data(), in, all.size());
  allreduce(all.data(), count * static_cast<size_t>(size()), type, op, timeout);
  if (count > 0) std::memcpy(out, all.data() + block * static_cast<size_t>(rank()), block);
}

size_t ProcessGroup::BlockOf(size_t total) const {
  const auto n = static_cast<size_t>(size());
  if (total % n != 0)
    throw ConfigError("reduce_scatter: " + std::to_string(total) + " elements do not split into " +
                      std::to_string(n) + " equal blocks, one per rank");
  return total / n;
}

namespace {

struct Backend {
  std::string_view name;
  detail::BackendConnector connect;
  bool needs_rendezvous;
};

constexpr std::array kBackends = {
    Backend{"gloo", detail::ConnectGloo, true},
    Backend{"hierarchical", detail::ConnectHierarchical, true},
    Backend{"nccl", detail::ConnectNccl, true},
    Backend{"single", detail::ConnectSingle, false},
};

std::string KnownBackends() {
  std::string out = "auto";
  for (const auto& b : kBackends) out += ", " + std::string(b.name);
  return out;
}

const Backend& FindBackend(std::string_view name) {
  for (const auto& b : kBackends)
    if (b.name == name) return b;
  throw ConfigError("unknown process group backend \"" + std::string(name) + "\"; known: " + KnownBackends());
}

// What "auto" means for a group of more than one rank, all of them known.
std::string_view ChooseBackend(const detail::GroupPlan& plan) {
  // CPU buffers between ranks; through shared memory where ranks share an agent.
  return detail::PreferHierarchical(plan.ranks) ? "hierarchical" : "gloo";
}

void CheckName(const std::string& name) {
  try {
    detail::CheckKey(name + "/rank/0");
  } catch (const RendezvousError&) {
    throw ConfigError("process group name \"" + name +
                      "\" is invalid: use 1 to 240 characters of A-Z a-z 0-9 . _ : / -");
  }
}

}  // namespace

std::unique_ptr<ProcessGroup> ConnectProcessGroup(const RankInfo& self, std::shared_ptr<KeyValueStore> store,
                                                  const ProcessGroupOptions& options) {
  detail::CheckRankInfo(self);
  CheckName(options.name);
  detail::CheckTimeout(options.rendezvous_timeout, "rendezvous");
  const bool automatic = options.backend == "auto";
  const Backend* chosen = nullptr;
  if (automatic && self.world_size == 1) chosen = &FindBackend("single");
  if (!automatic) chosen = &FindBackend(options.backend);

  detail::GroupPlan plan;
  plan.name = options.name;
  plan.self = self;
  plan.timeout = options.rendezvous_timeout;
  plan.deadline = std::chrono::steady_clock::now() + options.rendezvous_timeout;
  if (chosen && !chosen->needs_rendezvous) return chosen->connect(plan);

  if (!store)
    throw ConfigError("process group " + options.name + " needs a key-value store to rendezvous through");
  plan.ranks = detail::Rendezvous(self, *store, options.name, plan.deadline, options.rendezvous_timeout);
  plan.store = PrefixStore(store, options.name);
  if (!chosen) chosen = &FindBackend(ChooseBackend(plan));
  return chosen->connect(plan);
}

std::unique_ptr<ProcessGroup> ConnectProcessGroup(const Context& ctx, const ProcessGroupOptions& options) {
  RankInfo self;
  self.rank = ctx.rank();
  self.world_size = ctx.world_size();
  self.local_rank = ctx.local_rank();
  self.local_world_size = ctx.local_world_size();
  self.agent_id = ctx.agent_id();
  self.address = ctx.agent_address();
  if (self.world_size == 1 && self.address.empty()) self.address = "127.0.0.1";  // no peer needs to reach it
  if (self.world_size > 1 && ctx.is_local())
    throw ConfigError("local mode (RING_MASTER_URL is not set) runs one rank, but WORLD_SIZE is " +
                      std::to_string(self.world_size) +
                      "; run the trial under a master, or connect the ranks yourself with "
                      "ConnectProcessGroup(RankInfo, FileStore(dir))");
  if (self.world_size > 1 && self.address.empty())
    throw ConfigError(
        "RING_AGENT_ADDR is not set: the agent sets it to the address other ranks reach this host "
        "at; this agent may be older than the trial runtime");
  return ConnectProcessGroup(self, AllocationStore(ctx), options);
}

}  // namespace ring::trial
