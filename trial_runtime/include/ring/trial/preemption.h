#pragma once
// Whether the platform wants this trial to stop now (the experiment was
// paused, or its slots are needed): the trial should checkpoint, call
// acknowledge() and exit 0; it resumes later from that checkpoint.
//
//   if (ctx.preempt().should_preempt()) { save(); ctx.preempt().acknowledge(); return 0; }
//
// A background thread long-polls the master; SIGTERM (what the agent sends
// before killing) also counts as a request to stop.
#include <memory>

namespace ring::trial {

namespace detail {
class TrialApi;
}

class Preemption {
 public:
  explicit Preemption(std::shared_ptr<detail::TrialApi> api);  // api null: local mode
  ~Preemption();
  Preemption(const Preemption&) = delete;
  Preemption& operator=(const Preemption&) = delete;

  // Non-blocking; the first call starts watching.
  bool should_preempt();
  // Tells the master the trial is stopping because it was asked to.
  void acknowledge();

 private:
  struct Watch;
  std::shared_ptr<detail::TrialApi> api_;
  std::shared_ptr<Watch> watch_;
  bool acknowledged_ = false;
};

}  // namespace ring::trial
