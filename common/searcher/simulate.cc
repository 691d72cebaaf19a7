#include "common/searcher/simulate.h"

#include <deque>
#include <iomanip>
#include <set>
#include <sstream>

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

}  // namespace

Result<Simulation> Simulate(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space,
                            uint64_t seed, int64_t max_events) {
  auto created = Searcher::Create(config, space, seed);
  if (!created.ok()) return created.status();
  Searcher searcher = std::move(created).value();
  MetricSource metrics(seed);

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
  std::set<int> brackets;
  for (const auto& r : sim.rungs) brackets.insert(r.bracket);
  out << "Searcher " << config.name;
  if (config.name == "adaptive_asha")
    out << " (mode " << config.mode << ", divisor " << config.divisor << ", max_rungs " << config.max_rungs
        << ")";
  out << ": " << sim.trials << (sim.trials == 1 ? " trial" : " trials");
  if (brackets.size() > 1) out << " in " << brackets.size() << " brackets";
  out << ", max_length " << WithCommas(config.max_length_batches) << " batches\n\n";
  out << std::left << std::setw(9) << "bracket" << std::setw(6) << "rung" << std::setw(20)
      << "train to (batches)"
      << "trials\n";
  for (const auto& r : sim.rungs)
    out << std::left << std::setw(9) << r.bracket << std::setw(6) << r.rung << std::setw(20)
        << WithCommas(r.length) << r.trials << '\n';
  out << "\nTotal: " << WithCommas(sim.total_batches) << " batches";
  if (sim.full_batches > 0) {
    out << ", " << std::fixed << std::setprecision(1)
        << 100.0 * static_cast<double>(sim.total_batches) / static_cast<double>(sim.full_batches)
        << "% of training all " << sim.trials << " trials to " << WithCommas(config.max_length_batches)
        << " batches (" << WithCommas(sim.full_batches) << " batches)";
  }
  out << ".\n";
  if (!sim.finished) out << "The simulation stopped before the search ended (too many operations).\n";
  if (config.name == "adaptive_asha")
    out << "Simulated with random validation metrics: a real search promotes by the metrics its trials "
           "report,\n"
           "so its counts above rung 0 vary around these.\n";
  return out.str();
}

}  // namespace ring::search
