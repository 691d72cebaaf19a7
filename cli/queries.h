#pragma once
// Read queries several commands share, over MasterClient.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/master_client.h"
#include "common/status.h"

namespace ring::cli {

// Every trial of an experiment (follows the pages), as a JSON array.
Result<nlohmann::json> FetchAllTrials(MasterClient& master, int64_t experiment_id);

// The entry with the most batches of GET /trials/{id}/metrics?kind=KIND
// ({"batches", "metrics", "reported_at"}), or null when there is none.
Result<nlohmann::json> LatestMetrics(MasterClient& master, int64_t trial_id, const std::string& kind);

// True for COMPLETED, CANCELED and ERROR.
bool IsTerminalState(const std::string& state);

}  // namespace ring::cli
