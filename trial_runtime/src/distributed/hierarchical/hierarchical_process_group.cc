// HierarchicalProcessGroup: allreduce = shared-memory reduce to the local
// leader, the sum across the leaders in agent order, shared-memory broadcast
// back. With every rank on one agent, allreduce, reduce_scatter and
// allgather run in shared memory alone.
// Owns its ShmLocalGroup and two Gloo groups (the leaders' one only on
// leaders, and none when every agent runs one rank: then the group of every
// rank serves as the leaders' group). Used by one thread at a time.
#include "distributed/hierarchical/hierarchical_process_group.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "distributed/collective_args.h"
#include "distributed/hierarchical/hierarchical_topology.h"
#include "distributed/shm/shm_local_group.h"
#include "distributed/shm/shm_reduce.h"
#include "distributed/shm/shm_wait.h"
#include "distributed/store_keys.h"
#include "ring/trial/errors.h"

namespace ring::trial::detail {
namespace {

using shm::Clock;
using shm::Deadline;

// Sub-group keys repeat the group's name under its own scope.
constexpr size_t kMaxNameBytes = 100;
// Per rank and half of the segment. With a core per local rank a meeting
// costs about a microsecond and what decides is whether a window's working
// set (the own stretch of the buffer, the own slots and the peers' slots)
// stays in a core's L2: on 2 MiB of L2, 512 KiB slots made that 2.5 MiB
// for two ranks and a 1-4 MiB allreduce took 1.8x as long in some runs as
// with 128 KiB slots, never less. When ranks outnumber the cores every
// meeting waits for a rank to be scheduled, so fewer, larger windows win
// (4 ranks on 2 cores: 4-256 MiB allreduces 1.3-1.8x faster with 512 KiB).
constexpr size_t kSlotBytesWithCores = size_t{128} << 10;
constexpr size_t kSlotBytesSharingCores = size_t{512} << 10;

Timeout Remaining(Deadline deadline, const std::string& what) {
  const auto left = std::chrono::ceil<Timeout>(deadline - Clock::now());
  if (left.count() <= 0) throw CollectiveError(what + " ran out of time between its steps");
  return left;
}

class HierarchicalProcessGroup final : public ProcessGroup {
 public:
  HierarchicalProcessGroup(std::string name, RankInfo self, HostTopology topology,
                           std::unique_ptr<shm::ShmLocalGroup> local, std::unique_ptr<ProcessGroup> leaders,
                           std::unique_ptr<ProcessGroup> all)
      : name_(std::move(name)),
        self_(std::move(self)),
        topology_(std::move(topology)),
        local_(std::move(local)),
        own_leaders_(std::move(leaders)),
        all_(std::move(all)) {
    my_agent_ = topology_.agent_of[static_cast<size_t>(self_.rank)];
    // Without shared hosts the group of every rank is the leaders' group.
    leaders_ = topology_.has_shared_hosts() ? own_leaders_.get() : all_.get();
  }

  int rank() const override { return self_.rank; }
  int size() const override { return self_.world_size; }
  std::string backend() const override { return "hierarchical"; }
  bool allreduce_order_fixed() const override { return true; }

  void allreduce(void* data, size_t count, DataType type, ReduceOp op, Timeout timeout) override {
    CheckTimeout(timeout, "allreduce");
    CheckReduce(type, op);
    CheckBuffer(data, count, "allreduce");
    Run("allreduce", timeout, [&](Deadline deadline) {
      if (count == 0) return;
      if (topology_.agents.size() == 1) {  // every rank on this agent: shared memory only
        local_->allreduce(data, count, type, op, deadline);
        if (op == ReduceOp::kAverage) shm::DivideInPlace(data, count, type, static_cast<double>(size()));
        return;
      }
      local_->reduce_to_leader(data, count, type, op, deadline);
      if (local_->is_leader()) {
        AcrossAgents(data, count, type, op == ReduceOp::kAverage ? ReduceOp::kSum : op, deadline);
        if (op == ReduceOp::kAverage) shm::DivideInPlace(data, count, type, static_cast<double>(size()));
      }
      local_->broadcast(data, count, type, 0, deadline);
    });
  }

  void broadcast(void* data, size_t count, DataType type, int root, Timeout timeout) override {
    CheckTimeout(timeout, "broadcast");
    SizeOf(type);
    CheckRoot(root, size());
    CheckBuffer(data, count, "broadcast");
    Run("broadcast", timeout, [&](Deadline deadline) {
      if (count == 0) return;
      const int root_agent = topology_.agent_of[static_cast<size_t>(root)];
      if (my_agent_ == root_agent)
        local_->broadcast(data, count, type, topology_.local_rank_of[static_cast<size_t>(root)], deadline);
      if (local_->is_leader() && topology_.agents.size() > 1)
        leaders_->broadcast(data, count, type, leader_rank(root_agent), Remaining(deadline, "broadcast"));
      if (my_agent_ != root_agent) local_->broadcast(data, count, type, 0, deadline);
    });
  }

  void reduce_scatter(const void* in, void* out, size_t count, DataType type, ReduceOp op,
                      Timeout timeout) override {
    if (!ranks_in_local_order()) return ProcessGroup::reduce_scatter(in, out, count, type, op, timeout);
    CheckTimeout(timeout, "reduce_scatter");
    CheckReduce(type, op);
    CheckBuffer(in, count, "reduce_scatter");
    CheckBuffer(out, count, "reduce_scatter");
    Run("reduce_scatter", timeout, [&](Deadline deadline) {
      if (count == 0) return;
      local_->reduce_scatter(in, out, count, type, op, deadline);
      if (op == ReduceOp::kAverage) shm::DivideInPlace(out, count, type, static_cast<double>(size()));
    });
  }

  void allgather(const void* in, void* out, size_t count, DataType type, Timeout timeout) override {
    if (ranks_in_local_order()) {
      CheckTimeout(timeout, "allgather");
      SizeOf(type);
      CheckBuffer(in, count, "allgather");
      CheckBuffer(out, count, "allgather");
      Run("allgather", timeout,
          [&](Deadline deadline) { local_->allgather(in, out, count, type, deadline); });
      return;
    }
    check_usable("allgather");
    try {
      all_->allgather(in, out, count, type, timeout);
    } catch (const CollectiveError& e) {
      fail(e.what());
      throw;
    }
  }

  void barrier(Timeout timeout) override {
    CheckTimeout(timeout, "barrier");
    Run("barrier", timeout, [&](Deadline deadline) {
      local_->barrier(deadline);
      if (local_->is_leader() && topology_.agents.size() > 1)
        leaders_->barrier(Remaining(deadline, "barrier"));
      local_->barrier(deadline);
    });
  }

 private:
  // Every rank on this agent, local rank = rank: shared memory alone serves
  // reduce_scatter and allgather.
  bool ranks_in_local_order() const {
    if (topology_.agents.size() != 1) return false;
    const std::vector<int>& ranks = topology_.agents[0].ranks;
    for (size_t l = 0; l < ranks.size(); ++l)
      if (ranks[l] != static_cast<int>(l)) return false;
    return true;
  }

  // On a leader: the agents' partial results of `data` folded in agent order
  // into every leader's `data`. Two agents: Gloo's allreduce adds one pair
  // per element, exact either way round. More: Gloo's ring adds in an order
  // that depends on where an element falls, so the leaders reduce-scatter
  // (which folds in group rank = agent order) and allgather instead, over a
  // copy padded to a multiple of the agents.
  void AcrossAgents(void* data, size_t count, DataType type, ReduceOp op, Deadline deadline) {
    const size_t agents = topology_.agents.size();
    if (agents == 2) return leaders_->allreduce(data, count, type, op, Remaining(deadline, "allreduce"));
    const size_t element = SizeOf(type);
    const size_t block = (count + agents - 1) / agents;
    padded_.assign(block * agents * element, std::byte{0});
    part_.resize(block * element);
    std::memcpy(padded_.data(), data, count * element);
    leaders_->reduce_scatter(padded_.data(), part_.data(), block, type, op, Remaining(deadline, "allreduce"));
    leaders_->allgather(part_.data(), padded_.data(), block, type, Remaining(deadline, "allreduce"));
    std::memcpy(data, padded_.data(), count * element);
  }

  // The leaders' group rank of agent `agent`'s leader.
  int leader_rank(int agent) const {
    return topology_.has_shared_hosts() ? agent : topology_.leader_of(agent);
  }

  void check_usable(const std::string& what) const {
    if (!broken_.empty())
      throw CollectiveError(what + " on rank " + std::to_string(rank()) + ": process group " + name_ +
                            " (hierarchical) is unusable after an earlier failure: " + broken_);
  }

  // A failure on this rank also fails the other local ranks at once, which
  // may be waiting for this rank's part of a step.
  void fail(const std::string& why) {
    if (broken_.empty()) broken_ = why;
    local_->abort("rank " + std::to_string(rank()) + " failed: " + why);
  }

  template <typename Fn>
  void Run(const std::string& what, Timeout timeout, Fn&& fn) {
    check_usable(what);
    const Deadline deadline = Clock::now() + timeout;
    try {
      fn(deadline);
    } catch (const CollectiveError& e) {
      fail(e.what());
      throw CollectiveError(what + " failed on rank " + std::to_string(rank()) + " of " +
                            std::to_string(size()) + " in process group " + name_ +
                            " (hierarchical, timeout " + DescribeTimeout(timeout) + "): " + e.what());
    }
  }

  std::string name_;
  RankInfo self_;
  HostTopology topology_;
  int my_agent_ = 0;
  std::unique_ptr<shm::ShmLocalGroup> local_;
  std::unique_ptr<ProcessGroup> own_leaders_;  // leaders only, when some agent runs several ranks
  std::unique_ptr<ProcessGroup> all_;          // every rank: allgather, and the leaders' group otherwise
  ProcessGroup* leaders_ = nullptr;            // null on non-leaders
  std::string broken_;                         // why the group is unusable, once it is
  std::vector<std::byte> padded_, part_;       // AcrossAgents' copies (leaders, three agents or more)
};

Timeout RendezvousLeft(const GroupPlan& plan) {
  const auto left = std::chrono::duration_cast<Timeout>(plan.deadline - Clock::now());
  if (left.count() <= 0)
    throw RendezvousError("rendezvous of group " + plan.name + " timed out after " +
                          DescribeTimeout(plan.timeout) + " while connecting the hierarchical backend");
  return left;
}

std::string SegmentTag(const GroupPlan& plan, int agent) {
  const char* allocation = std::getenv("RING_ALLOCATION_ID");
  return std::string(allocation && *allocation ? allocation : "local") + "-" + plan.name + "-a" +
         std::to_string(agent);
}

}  // namespace

std::unique_ptr<ProcessGroup> ConnectHierarchical(const GroupPlan& plan) {
  if (plan.name.size() > kMaxNameBytes)
    throw ConfigError("hierarchical process group: the name \"" + plan.name + "\" has " +
                      std::to_string(plan.name.size()) + " characters; this backend allows at most " +
                      std::to_string(kMaxNameBytes));
  HostTopology topology = BuildHostTopology(plan.ranks);
  const RankInfo& self = plan.self;
  const int agent = topology.agent_of[static_cast<size_t>(self.rank)];

  shm::ShmLocalOptions local_options;
  local_options.local_rank = topology.local_rank_of[static_cast<size_t>(self.rank)];
  local_options.local_world_size = static_cast<int>(topology.agents[static_cast<size_t>(agent)].ranks.size());
  local_options.tag = SegmentTag(plan, agent);
  local_options.slot_bytes = shm::WaitStyleFor(local_options.local_world_size) == shm::WaitStyle::kSpin
                                 ? kSlotBytesWithCores
                                 : kSlotBytesSharingCores;
  local_options.connect_timeout = RendezvousLeft(plan);
  auto local_store = PrefixStore(plan.store, "shm/agent" + std::to_string(agent));
  auto local = shm::ShmLocalGroup::Connect(local_options, *local_store);

  // Leaders first: non-leaders go straight on to the group of every rank
  // and wait there, which the leaders join once their own group is up.
  std::unique_ptr<ProcessGroup> leaders;
  if (local->is_leader() && topology.has_shared_hosts() && topology.agents.size() > 1) {
    RankInfo leader = self;
    leader.rank = agent;
    leader.world_size = static_cast<int>(topology.agents.size());
    leader.local_rank = 0;
    leader.local_world_size = 1;
    leaders = ConnectProcessGroup(
        leader, plan.store,
        {.backend = "gloo", .rendezvous_timeout = RendezvousLeft(plan), .name = plan.name + "/leaders"});
  }
  auto all = ConnectProcessGroup(
      self, plan.store,
      {.backend = "gloo", .rendezvous_timeout = RendezvousLeft(plan), .name = plan.name + "/all"});
  return std::make_unique<HierarchicalProcessGroup>(plan.name, self, std::move(topology), std::move(local),
                                                    std::move(leaders), std::move(all));
}

}  // namespace ring::trial::detail
