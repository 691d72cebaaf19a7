#pragma once
// Running the digits-libtorch example on a TestCluster and reading back what
// its trial left: shared by the end-to-end tests on loopback and in network
// namespaces.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "tests/support/test_cluster.h"

#ifndef RING_HAVE_TORCH
#define RING_HAVE_TORCH 0
#endif

namespace ring::testing::digits {

inline constexpr const char* kData = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

// Why the example cannot run in this build or on this machine; empty when it can.
std::string WhyNotRunnable();
// The model folder the build staged.
std::string ModelDir();

// What a finished trial left: its metrics and what each rank printed last.
struct Outcome {
  int64_t trial = 0;
  int64_t length = 0;
  nlohmann::json validation;           // metrics?kind=validation
  nlohmann::json training;             // metrics?kind=training
  std::set<int> joined;                // ranks that printed "rank R of 2 (gloo)"
  std::map<int, std::string> digests;  // rank -> its final parameter digest
  std::set<int> stopped;               // ranks that printed "asked to stop"
};

// batches -> metrics of metric records.
std::map<int64_t, nlohmann::json> Values(const nlohmann::json& records);

// `ring experiment create CONFIG MODEL`; the experiment id (0 on failure).
int64_t Submit(TestCluster& cluster, const std::string& config, const std::string& model);
// `ring experiment wait`, then checks the experiment COMPLETED.
void WaitCompleted(TestCluster& cluster, int64_t exp);
int64_t TrialOf(TestCluster& cluster, int64_t exp);
// The experiment's (only) trial after it completed; metrics are checked to
// be stored once, and the ranks' last log lines are waited for.
Outcome Result(TestCluster& cluster, int64_t exp);

// A config of the example: 2 ranks, 200 batches, a checkpoint every 50.
struct ConfigOptions {
  std::string hparams;  // lines added to the hyperparameters
  std::string extra;    // lines appended
  std::string entrypoint = "sh run.sh";
  int max_restarts = 0;
};
std::string Config(TestCluster& cluster, const std::string& name, const ConfigOptions& options);

}  // namespace ring::testing::digits
