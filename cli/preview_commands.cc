#include "cli/preview_commands.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/experiment_config.h"
#include "common/searcher/simulate.h"

namespace ring::cli {

int PreviewSearch(CliEnv& env, const std::string& config_path, std::optional<uint64_t> seed) {
  std::ifstream in(config_path, std::ios::binary);
  if (!in) return env.Fail(Status(ErrorCode::kNotFound, "cannot read " + config_path));
  std::ostringstream text;
  text << in.rdbuf();
  auto config = ParseExperimentConfig(text.str(), std::filesystem::path(config_path).filename().string());
  if (!config.ok()) return env.Fail(config.status());
  // The experiment's own seed when it has one, so the preview shows its trials.
  const uint64_t used = seed ? *seed : static_cast<uint64_t>(config->experiment_seed.value_or(0));
  auto sim = search::Simulate(config->searcher, config->hyperparameters, used);
  if (!sim.ok()) return env.Fail(sim.status());
  if (env.json) {
    nlohmann::json rungs = nlohmann::json::array();
    for (const auto& r : sim->rungs)
      rungs.push_back({{"bracket", r.bracket}, {"rung", r.rung}, {"length", r.length}, {"trials", r.trials}});
    const bool trial_driven = search::ContractOf(config->searcher) == search::SearcherContract::kTrialDriven;
    // Under the trial-driven contract lengths are in `unit` (the time metric).
    env.out << nlohmann::json{{"searcher", config->searcher.name},
                              {"contract", trial_driven ? "trial_driven" : "operations"},
                              {"unit", config->searcher.time_metric.value_or("batches")},
                              {"trials", sim->trials},
                              {"rungs", rungs},
                              {"total_batches", sim->total_batches},
                              {"full_batches", sim->full_batches},
                              {"finished", sim->finished}}
                   .dump(2)
            << '\n';
    return 0;
  }
  env.out << search::FormatSimulation(config->searcher, *sim);
  return 0;
}

}  // namespace ring::cli
