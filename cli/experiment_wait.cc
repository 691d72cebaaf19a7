#include "cli/experiment_wait.h"

#include <map>
#include <thread>

#include "cli/format.h"
#include "cli/queries.h"

namespace ring::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct TrialSeen {
  std::string state;
  int64_t batches = -1;
};

// Tracks how long the master has been unreachable; decides when to give up.
class Reachability {
 public:
  explicit Reachability(CliEnv& env) : env_(env) {}
  // True to keep waiting after `status`; prints a note the first time.
  bool Tolerate(const Status& status) {
    if (!IsTransportError(status)) return false;
    auto now = Clock::now();
    if (!unreachable_) {
      unreachable_ = true;
      since_ = now;
      if (!env_.json)
        env_.err << "ring: the master is unreachable, retrying for " << env_.unreachable_grace.count()
                 << " s: " << status.message() << '\n';
    }
    return now - since_ < env_.unreachable_grace;
  }
  void Reached() { unreachable_ = false; }

 private:
  CliEnv& env_;
  bool unreachable_ = false;
  Clock::time_point since_{};
};

std::string MetricsSummary(CliEnv& env, int64_t trial_id) {
  std::string out;
  for (const char* kind : {"training", "validation"}) {
    auto latest = LatestMetrics(env.master, trial_id, kind);
    if (!latest.ok() || latest->is_null()) continue;
    out += std::string("  ") + kind + "@" + Field(*latest, "batches") + ": " +
           FormatMetrics(Member(*latest, "metrics"));
  }
  return out;
}

}  // namespace

int WaitForExperiment(CliEnv& env, int64_t experiment_id, const WaitOptions& options) {
  const auto start = Clock::now();
  const std::string path = "/api/v1/experiments/" + std::to_string(experiment_id);
  Reachability reach(env);
  std::string last_state;
  std::map<int64_t, TrialSeen> seen;
  for (;;) {
    auto exp = env.master.Get(path);
    if (!exp.ok()) {
      if (reach.Tolerate(exp.status())) {
        std::this_thread::sleep_for(env.poll_interval);
        continue;
      }
      return env.Fail(exp.status());
    }
    reach.Reached();
    std::string state = GetString(*exp, "state");
    if (state != last_state && !env.json) {
      env.out << "Experiment " << experiment_id << " (" << Field(*exp, "name") << "): " << state << '\n'
              << std::flush;
    }
    last_state = state;

    if (!env.json) {
      auto trials = FetchAllTrials(env.master, experiment_id);
      if (trials.ok()) {
        for (const auto& t : *trials) {
          int64_t id = GetInt(t, "id");
          std::string trial_state = GetString(t, "state");
          int64_t batches = GetInt(t, "total_batches");
          auto& prev = seen[id];
          bool state_changed = trial_state != prev.state;
          bool progressed = batches != prev.batches;
          if (state_changed || (options.show_metrics && progressed)) {
            env.out << "  Trial " << id << ": " << trial_state << "  batches " << batches;
            if (options.show_metrics && progressed) env.out << MetricsSummary(env, id);
            env.out << '\n' << std::flush;
          }
          prev = {trial_state, batches};
        }
      }
    }

    if (IsTerminalState(state)) {
      if (env.json && options.print_final_json) env.out << exp->dump(2) << '\n';
      if (state == "COMPLETED") return kExitOk;
      env.err << "ring: error: experiment " << experiment_id << " ended " << state << '\n';
      return kExitFailure;
    }
    if (options.timeout && Clock::now() - start >= *options.timeout) {
      env.err << "ring: error: experiment " << experiment_id << " is still " << state << " after "
              << options.timeout->count() << " s\n";
      return kExitFailure;
    }
    std::this_thread::sleep_for(env.poll_interval);
  }
}

}  // namespace ring::cli
