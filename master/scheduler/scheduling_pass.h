#pragma once
// One pass over one pool: the decision under construction and the
// bookkeeping both policies share. A policy decides the order requests are
// tried in, which running allocations a request may stop, and which blocked
// requests hold agents; the pass places, waits, preempts, holds and explains.
// Built, driven and discarded within one call of SchedulePool.
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "master/scheduler/scheduler.h"
#include "master/scheduler/scheduling_placement.h"
#include "master/scheduler/scheduling_preemption.h"

namespace ring::scheduling {

class PoolPass {
 public:
  // `input` must outlive the pass.
  explicit PoolPass(const PoolInput& input);

  const PoolInput& input() const { return input_; }
  const PendingRequest& request(int p) const { return input_.pending[p]; }
  Need need(int p) const { return brief_[p].need; }
  // What the pass reads of request p most often, kept together (the
  // requests are large and scattered in memory).
  struct Brief {
    Need need;
    int priority = 0;
    std::optional<int> max_slots;
    bool excluded = false;    // has excluded_agents
    bool container = false;   // has a container need
    bool restricted = false;  // see Restricted
    double weight = 1;
  };
  const Brief& brief(int p) const { return brief_[p]; }
  const RunningAllocation& running(int i) const { return input_.running[i]; }
  const PoolSlots& slots() const { return slots_; }
  const Footprints& footprints() const { return where_; }
  // Running allocation i is stopping: it was preempting already, or is a
  // victim of this pass.
  bool gone(int i) const { return gone_[i]; }
  // gone(i) for every running allocation i, for loops that read it often.
  const char* gone_flags() const { return gone_.data(); }

  // Experiments with running or pending work, numbered 0.. in this pass.
  int experiment_count() const { return static_cast<int>(experiment_ids_.size()); }
  int64_t experiment_id(int x) const { return experiment_ids_[x]; }
  int experiment_of_request(int p) const { return request_experiment_[p]; }
  int experiment_of_running(int i) const { return running_experiment_[i]; }
  // Experiment x's slots for max_slots: running ones (stopping ones too) plus
  // those given or promised in this pass.
  int CappedSlots(int x) const { return capped_[x]; }
  // Its slots for fair share: running ones that stay plus those given or
  // promised in this pass.
  int StayingSlots(int x) const { return staying_[x]; }
  // The experiment numbers whose StayingSlots changed, in the order of the
  // changes (may repeat): one that is not listed since some point has the
  // staying slots it had then.
  const std::vector<int>& staying_changes() const { return staying_changes_; }

  // Before any placement: the assignments are written over `old`'s (a
  // previous decision's, by FinishInto's caller), reusing their storage;
  // those left over are dropped at the end.
  void ReuseAssignments(std::vector<Assignment>&& old);
  // Records that request p is considered now (PoolDecision::order).
  void Consider(int p);
  // Asks the processor for what trying request p reads, ahead of it: the
  // requests come in scheduling order, scattered in memory.
  void Prefetch(int p) const {
    __builtin_prefetch(&brief_[p]);
    __builtin_prefetch(&state_[p]);
    __builtin_prefetch(&request_experiment_[p]);
  }
  // Whether p may be placed in this pass at all: a size some agent shape
  // takes (one agent large enough, for a single-node request), enabled
  // agents, room under max_slots. If not, says why.
  bool Admissible(int p);
  // Places p on free slots now.
  bool PlaceNow(int p);
  // Promises p the slots of allocations already stopping, if they make it fit.
  bool WaitForLeaving(int p);
  // Stops candidates the policy admits so that p fits (see VictimSearch).
  bool Preempt(int p, Candidates& candidates, const std::function<VictimSearch::Verdict(int)>& admit);
  // The backfill reservation: p holds the agent(s) closest to fitting it so
  // that requests after it cannot take their free slots in this pass.
  // Returns whether anything was held.
  bool HoldFor(int p);
  void SetReason(int p, std::string reason);
  // Sets a reason many requests share: kept once by the pass and pointed
  // at; returns it for the others.
  const std::string* ShareReason(int p, std::string reason);
  void ShareReason(int p, const std::string* reason);
  // Whether p avoids some agents (excluded_agents, or agents that cannot
  // run its container): what fails for it says nothing about other
  // requests of its size.
  bool Restricted(int p) const { return brief_[p].restricted; }
  // The agents (indexes) that cannot run p's container; empty for a
  // request without one.
  const std::vector<int>& CannotRun(int p) const;

  // While alive, request p's excluded agents, and those that cannot run its
  // container, are out of its reach.
  class Excluding {
   public:
    Excluding(PoolPass& pass, int p) : pass_(pass) {
      if (!pass.Restricted(p)) return;  // most requests: nothing to hide
      hidden_ = pass.slots_.Hide(pass.request(p).excluded_agents);
      const auto more = pass.slots_.HideIndexes(pass.CannotRun(p));
      hidden_.insert(hidden_.end(), more.begin(), more.end());
    }
    ~Excluding() {
      if (!hidden_.empty()) pass_.slots_.Unhide(hidden_);
    }
    Excluding(const Excluding&) = delete;
    Excluding& operator=(const Excluding&) = delete;

   private:
    PoolPass& pass_;
    std::vector<int> hidden_;
  };

  // Explains every request not assigned. `by_priority`: holders ahead of a
  // request are of higher or equal priority and are named so.
  PoolDecision Finish(bool by_priority);
  // The same decision written over `into`, the previous one of a kept
  // scheduler (pool_scheduler.h): reasons and order entries that did not
  // change are left in place instead of being built again. `by_id`: every
  // pending request's index, by allocation id (ids unique).
  void FinishInto(bool by_priority, const std::vector<int>& by_id, PoolDecision& into);

  // What request p came to so far: given slots now, or holding agents
  // (promised slots, or a reservation).
  bool Assigned(int p) const { return state_[p].outcome == Outcome::kAssigned; }
  bool Holds(int p) const { return state_[p].holder; }

 private:
  enum class Outcome { kNone, kAssigned, kPromised };
  struct RequestState {
    Outcome outcome = Outcome::kNone;
    bool holder = false;  // holds agents: promised slots or a reservation
    std::string reason;
    // Set instead of `reason` when the reason is one that many requests
    // share (Explain's reasons by need and behind holders): not copied
    // per request.
    const std::string* shared = nullptr;
    const std::string& text() const { return shared ? *shared : reason; }
  };
  // The reason of a request, for the decision (moved out of its state).
  static std::string Reason(RequestState& s) { return s.shared ? *s.shared : std::move(s.reason); }
  // One walk of the pending requests: briefs, experiment numbers, container
  // agents.
  void ReadRequests();
  int ContainerEntry(const ContainerNeed& need, std::map<ContainerNeed, int>& entries);
  // Makes `out` the decision's preempted_for, from preempted_for_.
  void FillPreemptedFor(std::map<std::string, std::string>& out);
  // Gives every request not assigned and not yet explained its reason.
  void Explain(bool by_priority);
  void Promise(int p, const Fit& fit);
  void MarkGone(int i);
  void AddStaying(int x, int slots) {
    staying_[x] += slots;
    staying_changes_.push_back(x);
  }

  const PoolInput& input_;
  PoolSlots slots_;
  Footprints where_;
  std::vector<char> gone_;
  VictimSearch search_;
  std::vector<std::vector<int>> leaving_on_;  // per agent: stopping allocations, in order
  std::vector<int64_t> experiment_ids_;       // by experiment number
  std::vector<int> request_experiment_;       // per pending request: its experiment number
  std::vector<int> running_experiment_;       // per running allocation: its experiment number
  std::vector<int> capped_;                   // per experiment number: see CappedSlots
  std::vector<int> staying_;                  // per experiment number: see StayingSlots
  std::vector<int> staying_changes_;          // see staying_changes()
  std::map<Need, std::optional<std::string>> never_fits_;
  // Per distinct ContainerNeed of the pending requests: the agents that
  // cannot run it; per pending request: its entry, or -1 for none.
  std::vector<std::vector<int>> cannot_run_;
  std::vector<int> request_cannot_run_;
  std::vector<Brief> brief_;  // per pending request
  std::vector<RequestState> state_;
  // Needs a fit failed for with no agent hidden, by FitKey: within a pass
  // free slots only shrink and agents only become held (hidden ones come
  // back as they were), so FitNow fails again for every later request of
  // the need (a restricted one sees fewer agents still); FitWhenLeft too
  // until leaving slots are added.
  static constexpr int kFitKeySlots = 256;
  static int FitKey(const Need& n) {
    return n.slots >= 0 && n.slots < kFitKeySlots ? n.slots * 3 + static_cast<int>(n.span) : -1;
  }
  std::vector<char> place_failed_;
  std::vector<const std::optional<std::string>*> never_fits_by_key_;  // never_fits_'s entries
  std::vector<int> wait_failed_;  // PoolSlots::leaving_added() + 1 at the failure; 0: none
  // (victim, request) of each preemption in order: the decision's
  // preempted_for, built in id order at the end.
  std::vector<std::pair<const std::string*, const std::string*>> preempted_for_;
  std::map<std::pair<int, int>, std::string> max_slots_reasons_;  // by (slots, max_slots)
  std::deque<std::string> shared_reasons_;                        // ShareReason's
  std::map<Need, std::string> shape_reasons_;                     // Explain's, by need
  std::map<std::pair<int, bool>, std::string> behind_reasons_;    // Explain's, by holders ahead
  std::vector<int> order_;
  PoolDecision decision_;
  size_t assigned_ = 0;  // decision_.assignments given so far (the rest: storage to reuse)
};

}  // namespace ring::scheduling
