#pragma once
// Ranks of a benchmark as forked processes on this host: each gets its rank
// and a fresh temporary directory (for a file store all ranks share); rank 0
// hands its figures back to the parent through a pipe.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ring::bench {

using RankBody = std::function<std::vector<double>(int rank, const std::string& dir)>;

// Runs `world` ranks of `body`. Returns rank 0's figures, or nothing when a
// rank threw (its message goes to stderr), exited abnormally, or outlived
// `timeout` (then every rank is killed).
std::optional<std::vector<double>> RunRanks(int world, const RankBody& body,
                                            std::chrono::seconds timeout = std::chrono::seconds(600));

}  // namespace ring::bench
