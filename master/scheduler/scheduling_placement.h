#pragma once
// The slots of one pool during one scheduling pass, indexed for placement.
// Owned by the pass that builds it (one pass, one thread, then discarded).
//
// Per agent it knows the free slots not yet given, the slots of stopping
// allocations not yet promised to anyone ("leaving"), and whether an earlier
// blocked request holds it. Usable agents (enabled, not held) sit in sets
// per count of free slots (AgentsBySize), so a best or worst fit costs
// about O(sizes + agents / 4096); idle ones sit in per-shape sets, so a
// whole-agent fit costs O(shapes + agents taken).
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "master/scheduler/index_set.h"
#include "master/scheduler/scheduler.h"

namespace ring::scheduling {

// Agents by a count of their slots (free, or free + leaving), for best and
// worst fits: per count, the set of agents with it, made when first used.
class AgentsBySize {
 public:
  // Empty, for agent indexes below `agents` and counts up to `largest`.
  void Reset(int agents, int largest) {
    agents_ = agents;
    sizes_.Reset(largest + 1);
    by_size_.assign(static_cast<size_t>(largest) + 1, IndexSet{});
  }
  void Insert(int size, int a) {
    IndexSet& set = by_size_[size];
    if (set.capacity() == 0) set.Reset(agents_);
    set.insert(a);
    sizes_.insert(size);
  }
  void Erase(int size, int a) {
    IndexSet& set = by_size_[size];
    if (set.capacity() == 0 || !set.erase(a) || !set.empty()) return;
    sizes_.erase(size);
  }
  // Among agents of size >= slots: of the smallest size (best fit) or the
  // largest (worst fit), the lowest agent.
  std::optional<int> Pick(int slots, PoolPolicy::Fit policy) const {
    const int largest = Largest();
    if (largest < 0 || largest < slots) return std::nullopt;
    const int size = policy == PoolPolicy::Fit::kBest ? sizes_.Next(slots) : largest;
    return by_size_[size].First();
  }
  // The largest size with agents (-1: none), and the next smaller one.
  int Largest() const { return sizes_.Last(); }
  int Below(int size) const { return sizes_.Prev(size - 1); }
  // The agents of a size, ascending.
  const IndexSet& of(int size) const { return by_size_[size]; }

 private:
  int agents_ = 0;
  IndexSet sizes_;                 // sizes with agents
  std::vector<IndexSet> by_size_;  // by size
};

// Agents of one total size and one slot type: what a request larger than one
// agent takes whole.
struct Shape {
  int size = 0;
  std::string slot_type;
  int agents = 0;   // all agents of this shape
  int enabled = 0;  // enabled ones
};

// Where a request's slots may go: one agent, or whole agents of one shape
// when no single agent takes them (the default); or one agent only
// (PendingRequest::single_node); or one agent because the request is one
// process (PendingRequest::one_process: a task that is not a trial).
enum class Span { kOneOrWholeAgents, kOneAgent, kOneProcess };

// What a request asks of placement. Caches of a pass that hold per request
// size (what never fits, what preemption could not place, reasons) are keyed
// by it, since one size may fit differently under each span.
struct Need {
  int slots = 0;
  Span span = Span::kOneOrWholeAgents;
  bool whole_agents() const { return span == Span::kOneOrWholeAgents; }
  auto operator<=>(const Need&) const = default;
};

inline Need NeedOf(int slots, bool single_node) {
  return {slots, single_node ? Span::kOneAgent : Span::kOneOrWholeAgents};
}
inline Need NeedOf(const PendingRequest& r) {
  if (r.one_process) return {r.slots, Span::kOneProcess};
  return NeedOf(r.slots, r.single_node);
}

// Where a request goes: one agent, or whole agents of one shape.
struct Fit {
  std::vector<int> agents;  // agent indexes, ascending (that is, in id order)
  bool whole = false;       // whole agents (a multi-agent fit)
};

class PoolSlots {
 public:
  // `agents` must outlive this object.
  explicit PoolSlots(const std::vector<AgentView>& agents);

  int agent_count() const { return static_cast<int>(agents_.size()); }
  int Find(const std::string& agent_id) const;  // agent index, or -1
  const AgentView& view(int a) const { return *agents_[a].view; }
  int free(int a) const { return static_cast<int>(agents_[a].free.size()); }
  int leaving(int a) const { return agents_[a].leaving; }
  int total(int a) const { return rooms_[a].total; }
  // free + leaving: what agent a has or will have without preempting anyone.
  int free_or_leaving(int a) const { return rooms_[a].free_or_leaving; }
  int shape(int a) const { return agents_[a].shape; }
  bool enabled(int a) const { return agents_[a].enabled; }
  bool held(int a) const { return agents_[a].held; }
  bool usable(int a) const { return usable_[a]; }

  // Largest size first, then by slot type.
  const std::vector<Shape>& shapes() const { return shapes_; }
  int enabled_agents() const { return enabled_agents_; }
  int enabled_slots() const { return enabled_slots_; }
  int max_size() const { return max_size_; }
  int max_enabled_size() const { return max_enabled_size_; }

  // Where `need` goes now, on usable agents (nullopt: nowhere).
  std::optional<Fit> FitNow(const Need& need, PoolPolicy::Fit policy) const;
  // The same, counting leaving slots as free; for requests FitNow refused.
  std::optional<Fit> FitWhenLeft(const Need& need, PoolPolicy::Fit policy) const;
  // Gives the lowest free slot ids of a FitNow to an allocation: written
  // over `out`, whose strings and vectors keep their storage.
  void Take(const Fit& fit, int slots, const std::string& allocation_id, Assignment& out);
  Assignment Take(const Fit& fit, int slots, const std::string& allocation_id) {
    Assignment out;
    Take(fit, slots, allocation_id, out);
    return out;
  }
  // Slots of an allocation on agent `a` that has been asked to stop.
  void AddLeaving(int a, int slots);
  // Keeps agent `a` for an earlier blocked request: no placement, wait or
  // preemption of anyone else uses it in this pass.
  void Hold(int a);
  // Takes usable agents out of reach (placement, waiting, preemption,
  // holds) until Unhide; returns the ones it hid. Ids not here are ignored.
  std::vector<int> Hide(const std::vector<std::string>& agent_ids);
  // The same by agent index.
  std::vector<int> HideIndexes(const std::vector<int>& agents);
  void Unhide(const std::vector<int>& hidden);

  // Usable idle agents of a shape, ascending.
  const IndexSet& idle(int shape) const { return idle_[shape]; }
  // Usable agents of a shape that become idle when their leaving slots go.
  const IndexSet& idle_when_left(int shape) const { return idle_when_left_[shape]; }
  // Usable agents with free slots, by free slots.
  const AgentsBySize& by_free() const { return by_free_; }

  // Every agent whose free, leaving, held or hidden state changed, in the
  // order of the changes (an agent may appear many times): what a
  // ReachIndex reads to stay up to date.
  const std::vector<int>& changes() const { return changes_; }
  // Whether some agents are hidden now (a restricted request is tried).
  bool any_hidden() const { return hidden_ > 0; }
  // How many times leaving slots were added so far: the only change that
  // can make a FitWhenLeft succeed that failed before.
  int leaving_added() const { return leaving_added_; }

  // Physically free, held agents included (for pending reasons).
  int LargestFreeBlock() const;
  std::vector<int> IdleEnabledPerShape() const;

 private:
  struct Agent {
    const AgentView* view = nullptr;
    std::vector<int> free;  // ascending
    int total = 0;
    int leaving = 0;
    int shape = -1;
    bool enabled = true;  // the view's, kept at hand
    bool held = false;
  };
  void Index(int a);
  void UpdateRoom(int a) {
    rooms_[a].free_or_leaving = free(a) + agents_[a].leaving;
    changes_.push_back(a);
  }
  void Unindex(int a);
  std::optional<Fit> WholeFit(int slots, bool count_leaving) const;

  std::vector<Agent> agents_;  // by id
  // Per agent: enabled and not held. Apart from agents_ because it is the
  // hottest check of a pass (the victim search asks it for every candidate).
  std::vector<char> usable_;
  // Per agent: total slots and free + leaving, apart for the same reason
  // (the victim search reads them for every candidate).
  struct Room {
    int total = 0;
    int free_or_leaving = 0;
  };
  std::vector<Room> rooms_;
  // Agent index by id: open addressing over (hash, index), a power of two
  // long, so a lookup (one per placement of every running allocation)
  // reads one slot and one id instead of a chain of nodes.
  struct IdSlot {
    size_t hash = 0;
    int agent = -1;  // -1: empty
  };
  std::vector<IdSlot> by_id_;
  std::vector<Shape> shapes_;
  int enabled_agents_ = 0;
  int enabled_slots_ = 0;
  int max_size_ = 0;
  int max_enabled_size_ = 0;
  AgentsBySize by_free_;          // usable agents with free > 0, by free
  AgentsBySize by_free_or_left_;  // usable agents with leaving > 0, by free + leaving
  std::vector<IndexSet> idle_;
  std::vector<IndexSet> idle_when_left_;
  std::vector<int> changes_;  // see changes()
  int hidden_ = 0;            // agents hidden now
  int leaving_added_ = 0;     // see leaving_added()
};

}  // namespace ring::scheduling
