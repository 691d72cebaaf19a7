// Searcher: the bookkeeping common to every search method. It hands out
// request ids, remembers each trial's outstanding TrainTo and whether it is
// closed or ended, drops events that do not match (unknown or ended trials,
// duplicate or late validations), and decides Shutdown; the method decides
// everything else.
#include <algorithm>

#include "common/searcher/searcher_state.h"

namespace ring::search {

SearcherContract ContractOf(const SearcherConfig& config) {
  return config.time_metric || config.max_length_batches == 0 ? SearcherContract::kTrialDriven
                                                              : SearcherContract::kOperations;
}

int64_t PlannedLength(const SearcherConfig& config) {
  if (ContractOf(config) == SearcherContract::kTrialDriven && config.time_metric) return config.max_time;
  return config.max_length_batches;
}

void Searcher::State::Settle(std::vector<Action>& out) {
  if (shutdown || !started || !method->Finished()) return;
  // A finished method trains nothing more: a trial still open without an
  // operation would otherwise wait forever. Trial-driven trials have no
  // operations; they run until they exit or are stopped.
  SearchContext ctx = Context(out);
  if (!trial_driven)
    for (const auto& [id, t] : trials.entries())
      if (!t.closed && !t.operation) ctx.Close(id);
  if (trials.live() > 0) return;
  shutdown = true;
  out.push_back(Shutdown{Failed()});
}

bool Searcher::State::Failed() const {
  if (failed) return true;
  return trials.ended(TrialEnd::kClosed) == 0 &&
         trials.ended(TrialEnd::kErrored) + trials.ended(TrialEnd::kInvalidHparams) > 0;
}

Searcher::Searcher(std::unique_ptr<State> state) : state_(std::move(state)) {}
Searcher::Searcher(Searcher&&) noexcept = default;
Searcher& Searcher::operator=(Searcher&&) noexcept = default;
Searcher::~Searcher() = default;

std::vector<Action> Searcher::Start() {
  std::vector<Action> out;
  State& s = *state_;
  if (s.started) return out;
  s.started = true;
  SearchContext ctx = s.Context(out);
  s.method->Start(ctx);
  s.Settle(out);
  return out;
}

std::vector<Action> Searcher::TrialCreated(RequestId id) {
  // No search method acts on creation: a trial's first TrainTo comes with its CreateTrial.
  if (TrialEntry* t = state_->trials.Find(id)) t->created = true;
  return {};
}

std::vector<Action> Searcher::ValidationCompleted(RequestId id, double metric, int64_t length) {
  std::vector<Action> out;
  State& s = *state_;
  TrialEntry* t = s.trials.Find(id);
  if (!t || t->ended() || t->operation != length) return out;
  t->operation.reset();
  SearchContext ctx = s.Context(out);
  s.method->ValidationCompleted(ctx, id, metric);
  s.Settle(out);
  return out;
}

std::vector<Action> Searcher::MetricsReported(RequestId id, double time, double metric) {
  std::vector<Action> out;
  State& s = *state_;
  const TrialEntry* t = s.trials.Find(id);
  if (!s.trial_driven || !t || t->closed || t->ended()) return out;
  SearchContext ctx = s.Context(out);
  s.method->MetricsReported(ctx, id, time, metric);
  s.Settle(out);
  return out;
}

SearcherContract Searcher::contract() const {
  return state_->trial_driven ? SearcherContract::kTrialDriven : SearcherContract::kOperations;
}

std::vector<Action> Searcher::TrialClosed(RequestId id) {
  const TrialEntry* t = state_->trials.Find(id);
  if (!t || t->ended()) return {};
  State& s = *state_;
  // Ending without having been closed is ending early, unless the trial
  // decides how long it trains.
  if (!t->closed && !s.trial_driven) return TrialExitedEarly(id, ExitReason::kCanceled);
  const bool finished_unasked = !t->closed;
  std::vector<Action> out;
  s.trials.End(id, TrialEnd::kClosed);
  SearchContext ctx = s.Context(out);
  if (finished_unasked)
    s.method->TrialFinished(ctx, id);
  else
    s.method->TrialClosed(ctx, id);
  s.Settle(out);
  return out;
}

std::vector<Action> Searcher::TrialExitedEarly(RequestId id, ExitReason reason) {
  const TrialEntry* t = state_->trials.Find(id);
  if (!t || t->ended()) return {};
  // After CloseTrial the trial had done all it was asked: its results stand.
  if (t->closed) return TrialClosed(id);
  std::vector<Action> out;
  State& s = *state_;
  s.trials.End(id, reason == ExitReason::kErrored          ? TrialEnd::kErrored
                   : reason == ExitReason::kInvalidHparams ? TrialEnd::kInvalidHparams
                                                           : TrialEnd::kCanceled);
  SearchContext ctx = s.Context(out);
  s.method->TrialExitedEarly(ctx, id, reason);
  s.Settle(out);
  return out;
}

std::optional<int64_t> Searcher::Operation(RequestId id) const {
  const TrialEntry* t = state_->trials.Find(id);
  return t ? t->operation : std::nullopt;
}

bool Searcher::Closed(RequestId id) const {
  const TrialEntry* t = state_->trials.Find(id);
  return t && t->closed;
}

bool Searcher::IsShutdown() const {
  return state_->shutdown;
}

double Searcher::Progress(const std::map<RequestId, int64_t>& trained) const {
  const State& s = *state_;
  if (s.shutdown) return 1.0;
  if (s.trial_driven) {
    // Trials decide their length: count ended trials over the planned ones.
    const double planned_trials = s.method->PlannedTrials();
    if (!(planned_trials > 0)) return 0.0;
    const auto ended = s.trials.ended(TrialEnd::kClosed) + s.trials.ended(TrialEnd::kErrored) +
                       s.trials.ended(TrialEnd::kCanceled);
    return std::min(static_cast<double>(ended) / planned_trials, kMaxProgressBeforeShutdown);
  }
  const double planned = s.method->PlannedBatches();
  if (!(planned > 0)) return 0.0;
  double done = 0;
  for (const auto& [id, t] : s.trials.entries()) {
    if (t.end == TrialEnd::kInvalidHparams) continue;
    // An ended trial has done all it will of its latest operation.
    auto it = trained.find(id);
    const int64_t batches = it == trained.end() ? 0 : std::max<int64_t>(it->second, 0);
    done += static_cast<double>(t.ended() ? t.target : std::min(batches, t.target));
  }
  return std::min(done / planned, kMaxProgressBeforeShutdown);
}

int Searcher::Bracket(RequestId id) const {
  return state_->method->Bracket(id);
}

}  // namespace ring::search
