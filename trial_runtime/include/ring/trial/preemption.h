#pragma once
// Whether the platform wants this trial to stop now (the experiment was
// paused, or its slots are needed): the trial should checkpoint, call
// acknowledge() and exit 0; it resumes later from that checkpoint.
//
//   if (ctx.preempt().should_preempt()) { save(); ctx.preempt().acknowledge(); return 0; }
//
// Under a master, a background thread of the chief (rank 0) long-polls
// GET /api/v1/allocations/{id}/preemption. In every mode SIGTERM (what the
// agent sends before it kills, and what Slurm sends a job it stops) counts
// as a request to stop once the trial has called should_preempt(); another
// within a second is the same request, a later one kills as usual. Owned by
// the Context; call from the training thread.
#include <functional>
#include <memory>

namespace ring::trial {

namespace detail {
class TrialApi;
}

class Preemption {
 public:
  explicit Preemption(std::shared_ptr<detail::TrialApi> api);  // api null: local mode, other ranks
  ~Preemption();
  Preemption(const Preemption&) = delete;
  Preemption& operator=(const Preemption&) = delete;

  // Non-blocking. The first call starts watching (the long poll, SIGTERM).
  // Throws AllocationEndedError once the master said the allocation ended.
  bool should_preempt();
  // Tells the master the trial stops because it was asked to, so that its
  // exit 0 pauses it instead of completing it. Retried; throws
  // AllocationEndedError or MasterUnreachableError when it cannot be told.
  // Does nothing in local mode or the second time. A checkpoint still
  // being written in the background (Checkpoints::save_async) is finished
  // first, so the trial resumes from it.
  void acknowledge();

 private:
  friend class Context;  // sets before_acknowledge_
  std::function<void()> before_acknowledge_;
  struct Watch;
  std::shared_ptr<detail::TrialApi> api_;
  std::shared_ptr<Watch> watch_;
  bool acknowledged_ = false;
};

}  // namespace ring::trial
