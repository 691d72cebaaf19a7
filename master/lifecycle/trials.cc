#include "master/lifecycle/trials.h"

#include <spdlog/spdlog.h>

namespace ring {

TrialRecord Trials::New(int64_t experiment_id, int64_t request_id, std::string hparams_json, int64_t seed,
                        RunState initial, std::string warm_start) {
  TrialRecord t;
  t.experiment_id = experiment_id;
  t.request_id = request_id;
  t.hparams_json = std::move(hparams_json);
  t.seed = seed;
  t.state = initial;
  t.latest_checkpoint = std::move(warm_start);
  return t;
}

Status Trials::Transition(TrialRecord& trial, RunState to) {
  if (trial.state == to) return Status::Ok();
  if (!CanTransitionTrial(trial.state, to))
    return Conflict("trial " + std::to_string(trial.id) + " is " + std::string(ToString(trial.state)) +
                    " and cannot become " + std::string(ToString(to)));
  const RunState from = trial.state;
  trial.state = to;
  if (IsTerminal(to)) trial.ended_at = NowRfc3339();
  if (Status s = store_.UpdateTrial(trial); !s.ok()) {
    trial.state = from;
    return s;
  }
  spdlog::info("[trials] trial {} {} -> {}", trial.id, ToString(from), ToString(to));
  return Status::Ok();
}

Status Trials::Reopen(TrialRecord& trial) {
  if (!IsTerminal(trial.state)) return Status::Ok();
  const TrialRecord before = trial;
  trial.state = RunState::kActive;
  trial.ended_at.clear();
  trial.restarts = 0;
  if (Status s = store_.UpdateTrial(trial); !s.ok()) {
    trial = before;
    return s;
  }
  spdlog::info("[trials] trial {} {} -> ACTIVE (continued in place)", trial.id, ToString(before.state));
  return Status::Ok();
}

Status Trials::Save(const TrialRecord& trial) {
  return store_.UpdateTrial(trial);
}

Status Trials::TransitionIdle(int64_t experiment_id, RunState to, const std::set<int64_t>& running) {
  auto trials = store_.ListTrials(experiment_id);
  if (!trials.ok()) return trials.status();
  for (auto& t : *trials) {
    if (IsTerminal(t.state) || t.state == to || running.count(t.id)) continue;
    if (Status s = Transition(t, to); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace ring
