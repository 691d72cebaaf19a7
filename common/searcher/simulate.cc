#include "common/searcher/simulate.h"

#include <deque>
#include <iomanip>
#include <set>
#include <sstream>

#include "common/searcher/asha_plan.h"

namespace ring::search {
namespace {

// SplitMix64: the simulated metrics, independent of the searcher's own generator.
class MetricSource {
 public:
  explicit MetricSource(uint64_t seed) : state_(seed ^ 0x5851f42d4c957f2dULL) {}
  double Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t state_;
};

std::string WithCommas(int64_t n) {
  const std::string digits = std::to_string(n);
  const size_t sign = n < 0 ? 1 : 0;
  std::string out = digits.substr(0, sign);
  for (size_t i = sign; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The trial-driven contract: trials train on their own; an adaptive_asha
// trial reports a validation at each rung's time of its bracket until it is
// stopped; other searchers' trials train as long as they like (max_time when
// set) and exit.
Simulation SimulateTrialDriven(const SearcherConfig& config, Searcher& searcher, MetricSource& metrics,
                               int64_t max_events) {
  const bool asha = config.name == "adaptive_asha";
  const auto plans = asha ? PlanAdaptiveAsha(config) : std::vector<AshaBracketPlan>{};
  std::deque<std::pair<RequestId, size_t>> work;  // a trial and the rung it reports at next
  std::map<RequestId, int64_t> trained;           // time units each trial trained
  std::map<RequestId, std::set<int64_t>> reached;
  std::deque<std::vector<Action>> pending;
  pending.push_back(searcher.Start());
  auto drain = [&] {
    while (!pending.empty()) {
      auto actions = std::move(pending.front());
      pending.pop_front();
      for (const auto& action : actions) {
        if (const auto* create = std::get_if<CreateTrial>(&action)) {
          const RequestId id = create->request_id;
          trained[id] = 0;
          pending.push_back(searcher.TrialCreated(id));
          if (asha) {
            work.emplace_back(id, 0);
          } else {
            // It trains to its own end (max_time when there is one), then exits 0.
            trained[id] = config.max_time;
            if (config.max_time > 0) reached[id].insert(config.max_time);
            pending.push_back(searcher.TrialClosed(id));
          }
        } else if (const auto* close = std::get_if<CloseTrial>(&action)) {
          pending.push_back(searcher.TrialClosed(close->request_id));  // it stops when asked
        }
      }
    }
  };
  drain();
  int64_t events = 0;
  while (!work.empty() && events < max_events) {
    const auto [id, k] = work.front();
    work.pop_front();
    if (searcher.Closed(id)) continue;
    const auto& lengths = plans[static_cast<size_t>(searcher.Bracket(id))].lengths;
    const int64_t length = lengths[k];
    trained[id] = length;
    reached[id].insert(length);
    ++events;
    pending.push_back(searcher.MetricsReported(id, static_cast<double>(length), metrics.Next()));
    drain();
    if (!searcher.Closed(id) && k + 1 < lengths.size()) work.emplace_back(id, k + 1);
  }
  Simulation sim;
  sim.finished = searcher.IsShutdown();
  sim.trials = static_cast<int64_t>(trained.size());
  sim.full_batches = sim.trials * config.max_time;
  std::map<std::pair<int, int64_t>, int64_t> per_rung;  // (bracket, length) -> trials
  for (const auto& [id, lengths] : reached)
    for (int64_t length : lengths) ++per_rung[{searcher.Bracket(id), length}];
  for (const auto& [id, units] : trained) sim.total_batches += units;
  int bracket = -1;
  int rung = 0;
  for (const auto& [key, trials] : per_rung) {
    rung = key.first == bracket ? rung + 1 : 0;
    bracket = key.first;
    sim.rungs.push_back({key.first, rung, key.second, trials});
  }
  return sim;
}

}  // namespace

Result<Simulation> Simulate(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space,
                            uint64_t seed, int64_t max_events) {
  auto created = Searcher::Create(config, space, seed);
  if (!created.ok()) return created.status();
  Searcher searcher = std::move(created).value();
  MetricSource metrics(seed);
  if (searcher.contract() == SearcherContract::kTrialDriven)
    return SimulateTrialDriven(config, searcher, metrics, max_events);

  std::deque<TrainTo> work;              // operations in the order they were given
  std::map<RequestId, int64_t> trained;  // batches each trial trained
  std::map<RequestId, std::set<int64_t>> reached;
  std::deque<std::vector<Action>> pending;
  pending.push_back(searcher.Start());
  auto drain = [&] {
    while (!pending.empty()) {
      auto actions = std::move(pending.front());
      pending.pop_front();
      for (const auto& action : actions) {
        if (const auto* create = std::get_if<CreateTrial>(&action)) {
          trained[create->request_id] = 0;
          pending.push_back(searcher.TrialCreated(create->request_id));
        } else if (const auto* train = std::get_if<TrainTo>(&action)) {
          work.push_back(*train);
        } else if (const auto* close = std::get_if<CloseTrial>(&action)) {
          // A closed trial ends once it has no operation left to run.
          if (!searcher.Operation(close->request_id))
            pending.push_back(searcher.TrialClosed(close->request_id));
        }
      }
    }
  };
  drain();
  int64_t events = 0;
  while (!work.empty() && events < max_events) {
    const TrainTo op = work.front();
    work.pop_front();
    if (searcher.Operation(op.request_id) != op.length) continue;  // superseded
    trained[op.request_id] = std::max(trained[op.request_id], op.length);
    reached[op.request_id].insert(op.length);
    ++events;
    pending.push_back(searcher.ValidationCompleted(op.request_id, metrics.Next(), op.length));
    drain();
  }

  Simulation sim;
  sim.finished = searcher.IsShutdown();
  sim.trials = static_cast<int64_t>(trained.size());
  sim.full_batches = sim.trials * config.max_length_batches;
  std::map<std::pair<int, int64_t>, int64_t> per_rung;  // (bracket, length) -> trials
  for (const auto& [id, lengths] : reached)
    for (int64_t length : lengths) ++per_rung[{searcher.Bracket(id), length}];
  for (const auto& [id, batches] : trained) sim.total_batches += batches;
  int bracket = -1;
  int rung = 0;
  for (const auto& [key, trials] : per_rung) {
    rung = key.first == bracket ? rung + 1 : 0;
    bracket = key.first;
    sim.rungs.push_back({key.first, rung, key.second, trials});
  }
  return sim;
}

std::string FormatSimulation(const SearcherConfig& config, const Simulation& sim) {
  std::ostringstream out;
  const bool trial_driven = ContractOf(config) == SearcherContract::kTrialDriven;
  // Lengths are in time-metric units under the trial-driven contract.
  const std::string unit = config.time_metric.value_or("batches");
  const int64_t max_length = PlannedLength(config);
  std::set<int> brackets;
  for (const auto& r : sim.rungs) brackets.insert(r.bracket);
  out << "Searcher " << config.name;
  if (config.name == "adaptive_asha" && !config.bracket_rungs.empty()) {
    out << " (bracket_rungs [";
    for (size_t i = 0; i < config.bracket_rungs.size(); ++i)
      out << (i ? ", " : "") << config.bracket_rungs[i];
    out << "], divisor " << config.divisor << ")";
  } else if (config.name == "adaptive_asha") {
    out << " (mode " << config.mode << ", divisor " << config.divisor << ", max_rungs " << config.max_rungs
        << ")";
  }
  out << ": " << sim.trials << (sim.trials == 1 ? " trial" : " trials");
  if (brackets.size() > 1) out << " in " << brackets.size() << " brackets";
  if (trial_driven && config.time_metric)
    out << ", max_time " << WithCommas(max_length) << " " << unit << " (time_metric " << unit << ")";
  else if (trial_driven)
    out << ", no max_length";
  else
    out << ", max_length " << WithCommas(max_length) << " batches";
  out << "\n";
  if (trial_driven)
    out << "Contract: trial-driven (the trials report " << (config.time_metric ? unit : "metrics")
        << " as they train; "
        << (config.name == "adaptive_asha" ? "trials not kept at a rung are stopped through preemption"
                                           : "a trial ends when its process exits 0")
        << ")\n";
  else
    out << "Contract: operations (the trials ask for \"train to N batches\" and report at N)\n";
  out << "\n";
  if (trial_driven && sim.rungs.empty()) {
    out << "The trials decide how long they train: " << sim.trials << (sim.trials == 1 ? " trial" : " trials")
        << ", no lengths to plan.\n";
    return out.str();
  }
  const std::string column = (trial_driven ? "at (" : "train to (") + unit + ")";
  out << std::left << std::setw(9) << "bracket" << std::setw(6) << "rung"
      << std::setw(static_cast<int>(std::max<size_t>(20, column.size() + 2))) << column << "trials\n";
  for (const auto& r : sim.rungs)
    out << std::left << std::setw(9) << r.bracket << std::setw(6) << r.rung
        << std::setw(static_cast<int>(std::max<size_t>(20, column.size() + 2))) << WithCommas(r.length)
        << r.trials << '\n';
  out << "\nTotal: " << WithCommas(sim.total_batches) << " " << unit;
  if (sim.full_batches > 0) {
    out << ", " << std::fixed << std::setprecision(1)
        << 100.0 * static_cast<double>(sim.total_batches) / static_cast<double>(sim.full_batches)
        << "% of training all " << sim.trials << " trials to " << WithCommas(max_length) << " " << unit
        << " (" << WithCommas(sim.full_batches) << " " << unit << ")";
  }
  out << ".\n";
  if (!sim.finished) out << "The simulation stopped before the search ended (too many operations).\n";
  if (config.name == "adaptive_asha" && trial_driven)
    out << "Simulated with random validation metrics: a real search stops trials by the metrics they "
           "report,\nso its counts above rung 0 vary around these.\n";
  else if (config.name == "adaptive_asha")
    out << "Simulated with random validation metrics: a real search promotes by the metrics its trials "
           "report,\n"
           "so its counts above rung 0 vary around these.\n";
  return out.str();
}

}  // namespace ring::search
