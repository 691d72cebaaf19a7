// PoolScheduler against SchedulePool: random pools go through random event
// sequences (requests arrive, are cancelled or change priority, allocations
// start, end or finish being preempted, agents join, leave, are disabled or
// change slots, requests exclude agents, the queue's seqs move, passes
// without change), and after every event the kept scheduler's decision must
// be the one a fresh full pass makes of the same input, field by field.
#include "master/scheduler/pool_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace ring {
namespace {

std::string ShowAssignment(const Assignment& a) {
  std::ostringstream out;
  out << a.allocation_id << " ->";
  for (const auto& p : a.placements) {
    out << " " << p.agent_id << ":";
    for (int s : p.slot_ids) out << s << ",";
  }
  return out.str();
}

// Every field of two decisions, with the first difference named.
::testing::AssertionResult SameAsFullPass(const PoolDecision& kept, const PoolDecision& full) {
  if (kept.assignments.size() != full.assignments.size())
    return ::testing::AssertionFailure()
           << "assignments: " << kept.assignments.size() << " against " << full.assignments.size();
  for (size_t i = 0; i < kept.assignments.size(); ++i)
    if (ShowAssignment(kept.assignments[i]) != ShowAssignment(full.assignments[i]))
      return ::testing::AssertionFailure()
             << "assignment " << i << ": " << ShowAssignment(kept.assignments[i]) << " against "
             << ShowAssignment(full.assignments[i]);
  if (kept.preempt != full.preempt) return ::testing::AssertionFailure() << "preempt differs";
  if (kept.preempted_for != full.preempted_for)
    return ::testing::AssertionFailure() << "preempted_for differs";
  if (kept.order != full.order) {
    size_t i = 0;
    while (i < kept.order.size() && i < full.order.size() && kept.order[i] == full.order[i]) ++i;
    return ::testing::AssertionFailure()
           << "order differs at " << i << " (sizes " << kept.order.size() << ", " << full.order.size() << ")";
  }
  if (kept.pending_reasons.size() != full.pending_reasons.size())
    return ::testing::AssertionFailure()
           << "reasons: " << kept.pending_reasons.size() << " against " << full.pending_reasons.size();
  for (const auto& [id, reason] : full.pending_reasons) {
    auto it = kept.pending_reasons.find(id);
    if (it == kept.pending_reasons.end()) return ::testing::AssertionFailure() << "no reason for " << id;
    if (it->second != reason)
      return ::testing::AssertionFailure()
             << "reason of " << id << ": \"" << it->second << "\" against \"" << reason << "\"";
  }
  return ::testing::AssertionSuccess();
}

struct RandomExperiment {
  int priority = kDefaultPriority;
  double weight = 1;
  std::optional<int> max_slots;
};

// A small pool driven the way the master drives one: each pass's
// assignments start and its victims are asked to stop, unless an event
// says otherwise.
class RandomPool {
 public:
  RandomPool(uint64_t seed, PoolPolicy policy) : rng_(seed) {
    input_.pool = "p";
    input_.policy = policy;
    const int agents = Pick(3, 9);
    for (int a = 0; a < agents; ++a) AddAgent();
    for (int e = 1; e <= 6; ++e) experiments_[e] = RandomSettings();
    const int pending = Pick(0, 30);
    for (int i = 0; i < pending; ++i) Arrive();
    // Some running work from a first pass applied.
    Apply(SchedulePool(input_));
  }

  PoolInput& input() { return input_; }
  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(int percent) { return Pick(1, 100) <= percent; }

  // One event; returns its name.
  std::string Event(const PoolDecision& last) {
    switch (Pick(0, 16)) {
      case 0:
      case 1:
      case 2:
        Arrive();
        return "arrive";
      case 3:
        TwinArrives();
        return "twin arrives";
      case 4:
        if (input_.pending.empty()) return "none";
        input_.pending.erase(input_.pending.begin() + Pick(0, static_cast<int>(input_.pending.size()) - 1));
        return "cancel";
      case 5:
        EndOne(false);
        return "allocation ends";
      case 6:
        EndOne(true);
        return "preemption completes";
      case 7:
        Apply(last);
        return "decision applied";
      case 8:
        if (Chance(50))
          AddAgent();
        else
          RemoveAgent();
        return "agent joins or leaves";
      case 9: {
        if (input_.agents.empty()) return "none";
        auto& a = input_.agents[Pick(0, static_cast<int>(input_.agents.size()) - 1)];
        a.enabled = !a.enabled;
        return "agent enabled or disabled";
      }
      case 10: {
        const int e = Pick(1, 6);
        experiments_[e].priority = Pick(1, 5) * 10;
        for (auto& r : input_.pending)
          if (r.experiment_id == e) r.priority = experiments_[e].priority;
        for (auto& r : input_.running)
          if (r.experiment_id == e) r.priority = experiments_[e].priority;
        return "priority change";
      }
      case 11: {
        if (input_.pending.empty() || input_.agents.empty()) return "none";
        auto& r = input_.pending[Pick(0, static_cast<int>(input_.pending.size()) - 1)];
        if (r.excluded_agents.empty())
          r.excluded_agents = {input_.agents[Pick(0, static_cast<int>(input_.agents.size()) - 1)].id};
        else
          r.excluded_agents.clear();
        return "excluded agents";
      }
      case 12:
        // The driver numbers the queue by position: one ahead left.
        for (size_t i = 0; i < input_.pending.size(); ++i)
          input_.pending[i].queued_seq = static_cast<int64_t>(i) + 1;
        return "queue renumbered";
      case 13:
        std::shuffle(input_.pending.begin(), input_.pending.end(), rng_);
        return "queue vector shuffled";
      case 14: {
        if (input_.agents.empty()) return "none";
        auto& a = input_.agents[Pick(0, static_cast<int>(input_.agents.size()) - 1)];
        if (a.free_slots.size() == static_cast<size_t>(a.total_slots) && Chance(50)) {
          a.total_slots = a.total_slots == 8 ? 4 : 8;
          a.free_slots.clear();
          for (int s = 0; s < a.total_slots; ++s) a.free_slots.push_back(s);
        }
        return "agent slots change";
      }
      default:
        return "no change";
    }
  }

 private:
  RandomExperiment RandomSettings() {
    RandomExperiment s;
    s.priority = Pick(1, 5) * 10;
    s.weight = Pick(1, 3);
    if (Chance(30)) s.max_slots = Pick(1, 4) * 4;
    return s;
  }

  void AddAgent() {
    AgentView v;
    v.id = "agent-" + std::to_string(next_agent_++);
    v.pool = input_.pool;
    v.slot_type = Chance(20) ? "cuda" : "cpu";
    v.total_slots = Chance(25) ? 4 : 8;
    v.enabled = !Chance(10);
    if (Chance(30)) v.container_runtimes = {"podman"};
    for (int s = 0; s < v.total_slots; ++s) v.free_slots.push_back(s);
    input_.agents.push_back(std::move(v));
  }

  void RemoveAgent() {
    if (input_.agents.size() <= 1) return;
    const int a = Pick(0, static_cast<int>(input_.agents.size()) - 1);
    const std::string id = input_.agents[a].id;
    input_.agents.erase(input_.agents.begin() + a);
    // Its work is lost; what ran elsewhere too frees its slots there.
    std::vector<RunningAllocation> keep;
    for (auto& r : input_.running) {
      const bool there = std::any_of(r.placements.begin(), r.placements.end(),
                                     [&](const Placement& p) { return p.agent_id == id; });
      if (there)
        Free(r);
      else
        keep.push_back(std::move(r));
    }
    input_.running = std::move(keep);
  }

  void Arrive() {
    PendingRequest r;
    r.allocation_id = "req-" + std::to_string(next_request_++);
    r.experiment_id = Pick(1, 6);
    const auto& s = experiments_[r.experiment_id];
    r.priority = s.priority;
    r.weight = s.weight;
    r.max_slots = s.max_slots;
    const int sizes[] = {1, 1, 2, 2, 4, 8, 16};
    r.slots = sizes[Pick(0, 6)];
    r.single_node = Chance(10);
    r.one_process = Chance(5);
    r.queued_seq = ++next_seq_;
    if (Chance(8) && !input_.agents.empty())
      r.excluded_agents = {input_.agents[Pick(0, static_cast<int>(input_.agents.size()) - 1)].id};
    if (Chance(8)) r.container = ContainerNeed{Chance(50) ? "podman" : "", true, Chance(50)};
    input_.pending.push_back(std::move(r));
  }

  // A request like one already waiting: the queue-only path's case.
  void TwinArrives() {
    if (input_.pending.empty()) return Arrive();
    PendingRequest r = input_.pending[Pick(0, static_cast<int>(input_.pending.size()) - 1)];
    r.allocation_id = "req-" + std::to_string(next_request_++);
    r.queued_seq = ++next_seq_;
    input_.pending.push_back(std::move(r));
  }

  AgentView* Agent(const std::string& id) {
    for (auto& a : input_.agents)
      if (a.id == id) return &a;
    return nullptr;
  }

  void Free(const RunningAllocation& r) {
    for (const auto& p : r.placements)
      if (AgentView* a = Agent(p.agent_id)) {
        a->free_slots.insert(a->free_slots.end(), p.slot_ids.begin(), p.slot_ids.end());
        std::sort(a->free_slots.begin(), a->free_slots.end());
      }
  }

  void EndOne(bool preempting_only) {
    std::vector<int> which;
    for (int i = 0; i < static_cast<int>(input_.running.size()); ++i)
      if (!preempting_only || input_.running[i].preempting) which.push_back(i);
    if (which.empty()) return;
    const int i = which[Pick(0, static_cast<int>(which.size()) - 1)];
    Free(input_.running[i]);
    input_.running.erase(input_.running.begin() + i);
  }

  // What the driver does with a decision: assigned requests run, victims stop.
  void Apply(const PoolDecision& d) {
    for (const auto& victim : d.preempt)
      for (auto& r : input_.running)
        if (r.allocation_id == victim) r.preempting = true;
    for (const auto& a : d.assignments) {
      auto it = std::find_if(input_.pending.begin(), input_.pending.end(),
                             [&](const PendingRequest& r) { return r.allocation_id == a.allocation_id; });
      if (it == input_.pending.end()) continue;
      RunningAllocation run;
      run.allocation_id = it->allocation_id;
      run.experiment_id = it->experiment_id;
      run.slots = it->slots;
      run.priority = it->priority;
      run.weight = it->weight;
      run.max_slots = it->max_slots;
      run.started_seq = ++next_started_;
      run.preemptible = !Chance(10);
      run.placements = a.placements;
      for (const auto& p : a.placements)
        if (AgentView* agent = Agent(p.agent_id))
          for (int s : p.slot_ids) std::erase(agent->free_slots, s);
      input_.running.push_back(std::move(run));
      input_.pending.erase(it);
    }
  }

  std::mt19937_64 rng_;
  PoolInput input_;
  std::map<int64_t, RandomExperiment> experiments_;
  int next_agent_ = 0;
  int next_request_ = 0;
  int64_t next_seq_ = 0;
  int64_t next_started_ = 0;
};

struct PathCounts {
  int full = 0, unchanged = 0, queue = 0;
};

// Runs `sequences` random sequences of `events` events under `policy`.
PathCounts RunSequences(PoolPolicy policy, int sequences, int events, uint64_t seed) {
  PathCounts counts;
  for (int s = 0; s < sequences; ++s) {
    RandomPool pool(seed + static_cast<uint64_t>(s), policy);
    PoolScheduler kept;
    PoolDecision last;
    for (int e = 0; e < events; ++e) {
      const std::string event = e == 0 ? "first pass" : pool.Event(last);
      const PoolDecision full = SchedulePool(pool.input());
      PoolInput given = pool.input();
      const PoolDecision& decided = kept.Schedule(given);
      const auto same = SameAsFullPass(decided, full);
      if (!same) {
        ADD_FAILURE() << "sequence " << s << " (seed " << seed + static_cast<uint64_t>(s) << "), event " << e
                      << " (" << event << "), path " << static_cast<int>(kept.last_path()) << ": "
                      << same.message();
        return counts;
      }
      switch (kept.last_path()) {
        case PoolScheduler::Path::kFull:
          ++counts.full;
          break;
        case PoolScheduler::Path::kUnchanged:
          ++counts.unchanged;
          break;
        case PoolScheduler::Path::kQueue:
          ++counts.queue;
          break;
      }
      last = full;
    }
  }
  return counts;
}

TEST(PoolSchedulerTest, PriorityBestFitDecidesAsAFullPass) {
  const auto counts =
      RunSequences({PoolPolicy::Type::kPriority, true, PoolPolicy::Fit::kBest}, 150, 60, 1000);
  EXPECT_GT(counts.queue, 100);  // the queue-only path is taken, and checked
  EXPECT_GT(counts.unchanged, 100);
  EXPECT_GT(counts.full, 100);
}

TEST(PoolSchedulerTest, PriorityWorstFitDecidesAsAFullPass) {
  const auto counts =
      RunSequences({PoolPolicy::Type::kPriority, true, PoolPolicy::Fit::kWorst}, 150, 60, 2000);
  EXPECT_GT(counts.queue, 100);
}

TEST(PoolSchedulerTest, PriorityWithoutPreemptionDecidesAsAFullPass) {
  const auto counts =
      RunSequences({PoolPolicy::Type::kPriority, false, PoolPolicy::Fit::kBest}, 100, 60, 3000);
  EXPECT_GT(counts.queue, 50);
}

TEST(PoolSchedulerTest, FairShareDecidesAsAFullPass) {
  const auto counts =
      RunSequences({PoolPolicy::Type::kFairShare, true, PoolPolicy::Fit::kBest}, 100, 60, 4000);
  EXPECT_GT(counts.unchanged, 50);
}

TEST(PoolSchedulerTest, PolicyChangeBetweenPasses) {
  RandomPool pool(77, {PoolPolicy::Type::kPriority, true, PoolPolicy::Fit::kBest});
  PoolScheduler kept;
  for (auto type : {PoolPolicy::Type::kPriority, PoolPolicy::Type::kFairShare, PoolPolicy::Type::kPriority}) {
    pool.input().policy.type = type;
    PoolInput given = pool.input();
    EXPECT_TRUE(SameAsFullPass(kept.Schedule(given), SchedulePool(pool.input())));
    EXPECT_EQ(kept.last_path(), PoolScheduler::Path::kFull);
  }
}

// The kept input goes back to the caller; a repeated id is left to the pure pass.
TEST(PoolSchedulerTest, RepeatedIdsAndTheInputHandedBack) {
  RandomPool pool(78, {PoolPolicy::Type::kPriority, true, PoolPolicy::Fit::kBest});
  PoolScheduler kept;
  PoolInput given = pool.input();
  kept.Schedule(given);
  EXPECT_TRUE(given.pending.empty() && given.agents.empty());
  PoolInput twice = pool.input();
  PendingRequest copy;
  copy.allocation_id = "same";
  twice.pending.push_back(copy);
  copy.queued_seq = 1000;
  twice.pending.push_back(copy);
  const PoolInput reference = twice;
  EXPECT_TRUE(SameAsFullPass(kept.Schedule(twice), SchedulePool(reference)));
}

}  // namespace
}  // namespace ring
