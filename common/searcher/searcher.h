#pragma once
// Searchers decide which trials an experiment runs and how long each trains.
// A Searcher is a pure state machine: events in (trial created, validation
// completed, trial closed, trial exited early), actions out (create a trial,
// train a trial to a length, close a trial, shut down). No I/O, no clock, no
// threads; randomness comes from a seeded generator that is part of the
// state. The whole state snapshots to JSON, and a searcher restored from a
// snapshot makes exactly the decisions the original would have made.
//
// The master owns one Searcher per experiment (under the controller's mutex),
// writes its snapshot to SQLite after every event, and turns actions into
// trial rows, operations and closes. `ring preview-search` runs one against
// simulated metrics (simulate.h).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/experiment_config.h"
#include "common/status.h"

namespace ring::search {

// The searcher's own id for a trial, 1, 2, 3... in creation order. The master
// stores it beside the trial row.
using RequestId = int64_t;

// Start a new trial with these hyperparameters and this seed.
struct CreateTrial {
  RequestId request_id = 0;
  nlohmann::json hparams;
  int64_t seed = 0;
  bool operator==(const CreateTrial&) const = default;
};

// Train the trial until its total batches reach `length`, then validate and
// report the searcher metric (ValidationCompleted). Lengths of one trial grow.
struct TrainTo {
  RequestId request_id = 0;
  int64_t length = 0;
  bool operator==(const TrainTo&) const = default;
};

// The trial gets no more operations; it ends once it exits.
struct CloseTrial {
  RequestId request_id = 0;
  bool operator==(const CloseTrial&) const = default;
};

// The search is over: no more trials will be created or trained.
struct Shutdown {
  // The search gave up (too many invalid hyperparameters), or no trial
  // completed and some errored or had invalid hyperparameters.
  bool failure = false;
  bool operator==(const Shutdown&) const = default;
};

using Action = std::variant<CreateTrial, TrainTo, CloseTrial, Shutdown>;

// "create 3 {"lr":0.1} seed 77", "train 3 to 400", "close 3", "shutdown"
// (or "shutdown failure").
std::string ToString(const Action& action);
nlohmann::json ToJson(const Action& action);

// Why a trial ended before its operations were done.
enum class ExitReason {
  kErrored,         // failed after its restarts; counts as a trial of the search
  kInvalidHparams,  // said its hyperparameters are invalid; replaced, not counted
  kCanceled,        // exited 0 without completing its operation, or was killed
};

// "errored", "invalid_hparams", "canceled".
std::string_view ToString(ExitReason reason);
std::optional<ExitReason> ParseExitReason(std::string_view text);

// Which contract an experiment's trials follow (docs/searchers.md).
enum class SearcherContract {
  // The trial pulls operations ("train to N batches") and completes each
  // with the searcher metric at that length.
  kOperations,
  // Determined 0.38's: the trial trains as long as it likes and reports
  // validations that carry the time metric; the searcher stops a trial by
  // asking it to stop (preemption). A trial that exits 0 on its own is done.
  kTrialDriven,
};

// Trial-driven when searcher.time_metric is set or searcher.max_length is
// absent; operations otherwise.
SearcherContract ContractOf(const SearcherConfig& config);
// The length the searcher plans with: max_time under the trial-driven
// contract when time_metric is set, else max_length in batches (0 when absent).
int64_t PlannedLength(const SearcherConfig& config);

// Progress stays below this until the search shuts down.
inline constexpr double kMaxProgressBeforeShutdown = 0.99;

// One search algorithm. Implementations: single, random, grid, adaptive_asha
// (common/searcher/*_search.h, docs/searchers.md). Called only through
// Searcher, which does the bookkeeping common to all (outstanding operations,
// closed trials, duplicates).
class SearchMethod;

class Searcher {
 public:
  // Checks that `config` suits the searcher (e.g. grid needs `count` on every
  // int, double and log hyperparameter) and builds it; kInvalidConfig naming
  // the field otherwise. `seed` is reproducibility.experiment_seed.
  static Result<Searcher> Create(const SearcherConfig& config,
                                 const std::map<std::string, Hyperparameter>& space, uint64_t seed);
  // Rebuilds a searcher from Snapshot() of one made with the same config and
  // space. kInvalidArgument when the snapshot is not one Snapshot() wrote
  // (wrong shape, other searcher, trials that do not add up).
  static Result<Searcher> Restore(const SearcherConfig& config,
                                  const std::map<std::string, Hyperparameter>& space,
                                  const nlohmann::json& snapshot);

  Searcher(Searcher&&) noexcept;
  Searcher& operator=(Searcher&&) noexcept;
  ~Searcher();

  // The first actions; call once, before any other event (a second call
  // returns nothing). Each CreateTrial is followed in the same list by the
  // trial's first TrainTo: single 1 trial, random and grid
  // min(max_concurrent_trials, trials) (all when 0), adaptive_asha each
  // bracket's share of max_concurrent_trials.
  std::vector<Action> Start();
  // The master created the trial of a CreateTrial. Returns no actions with
  // the current searchers (the first TrainTo already came with the create).
  std::vector<Action> TrialCreated(RequestId id);
  // The trial trained to `length` and validated with `metric`. Ignored (no
  // actions) unless TrainTo{id, length} is its outstanding operation, so a
  // retried or late report changes nothing.
  std::vector<Action> ValidationCompleted(RequestId id, double metric, int64_t length);
  // The trial ended normally after CloseTrial. A trial that ends this way
  // without a CloseTrial counts as TrialExitedEarly(kCanceled) under the
  // operations contract; under the trial-driven one it finished its work
  // (closed). Ignored for unknown trials and trials that already ended.
  std::vector<Action> TrialClosed(RequestId id);
  // The trial ended before its operations were done. Ignored for unknown
  // trials and trials that already ended; after CloseTrial it counts as
  // TrialClosed (the trial had done all it was asked).
  std::vector<Action> TrialExitedEarly(RequestId id, ExitReason reason);

  // Trial-driven contract only: the trial reported a validation with its
  // time metric at `time` and the searcher metric `metric`. adaptive_asha
  // may answer CloseTrial, which the master carries out by asking the
  // running trial to stop. Ignored for unknown, closed and ended trials, and
  // under the operations contract.
  std::vector<Action> MetricsReported(RequestId id, double time, double metric);

  SearcherContract contract() const;

  // The outstanding TrainTo length of a trial, if any.
  std::optional<int64_t> Operation(RequestId id) const;
  // Whether CloseTrial was decided for the trial (or it ended).
  bool Closed(RequestId id) const;
  bool IsShutdown() const;
  // 0..1. `trained` holds the total batches each trial trained so far.
  // Batches done over the batches the plan expects (docs/searchers.md): each
  // trial counts up to its latest TrainTo length, an ended trial counts that
  // length in full, trials with invalid hyperparameters count nothing. At
  // most kMaxProgressBeforeShutdown until Shutdown, then 1.
  double Progress(const std::map<RequestId, int64_t>& trained) const;
  // The bracket of a trial, 0, 1, ... in the order of docs/searchers.md
  // (adaptive_asha; 0 for other searchers and unknown trials).
  int Bracket(RequestId id) const;

  nlohmann::json Snapshot() const;

 private:
  struct State;
  explicit Searcher(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace ring::search
