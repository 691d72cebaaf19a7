#include "master/maintenance/checkpoint_gc.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ring {
namespace {

GcCandidate C(std::string uuid, int64_t trial, int64_t batches, std::optional<double> metric, bool ended,
              bool latest = false) {
  return {std::move(uuid), trial, batches, metric, ended, latest};
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(CheckpointGcTest, EndedTrialKeepsItsLatestAndBest) {
  std::vector<GcCandidate> cs = {C("a", 1, 100, 0.5, true), C("b", 1, 200, 0.2, true),
                                 C("c", 1, 300, 0.4, true, true)};
  EXPECT_EQ(Sorted(CheckpointsToDelete(cs, {0, 1, 1, true})), (std::vector<std::string>{"a"}));
  EXPECT_EQ(Sorted(CheckpointsToDelete(cs, {0, 0, 1, true})), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Sorted(CheckpointsToDelete(cs, {0, 1, 0, false})),
            (std::vector<std::string>{"b", "c"}));  // larger is better
  EXPECT_EQ(Sorted(CheckpointsToDelete(cs, {0, 0, 0, true})), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(CheckpointGcTest, RunningTrialsKeepEverything) {
  std::vector<GcCandidate> cs = {C("a", 1, 100, 0.5, false), C("b", 1, 200, 0.6, false, true)};
  EXPECT_TRUE(CheckpointsToDelete(cs, {0, 0, 0, true}).empty());
}

TEST(CheckpointGcTest, ExperimentBestAcrossTrials) {
  std::vector<GcCandidate> cs = {C("a", 1, 100, 0.5, true), C("b", 2, 100, 0.1, true),
                                 C("c", 3, 100, std::nullopt, true)};
  EXPECT_EQ(Sorted(CheckpointsToDelete(cs, {1, 0, 0, true})), (std::vector<std::string>{"a", "c"}));
}

TEST(CheckpointGcTest, WarmStartSourcesOfLiveExperimentsAreKept) {
  std::vector<GcCandidate> cs = {C("a", 1, 100, 0.5, true), C("b", 1, 200, 0.6, true, true)};
  EXPECT_EQ(Sorted(CheckpointsToDelete(cs, {0, 0, 0, true})), (std::vector<std::string>{"a", "b"}));
  cs[0].warm_start_source = true;
  EXPECT_EQ(Sorted(CheckpointsToDelete(cs, {0, 0, 0, true})), (std::vector<std::string>{"b"}));
}

TEST(CheckpointGcTest, ModelVersionsAreKept) {
  std::vector<GcCandidate> cs = {C("a", 1, 100, 0.5, true), C("b", 1, 200, 0.6, true, true),
                                 C("c", 2, 100, 0.1, false, true)};
  cs[0].model_version = true;
  EXPECT_EQ(Sorted(CheckpointsToDelete(cs, {0, 0, 0, true})), (std::vector<std::string>{"b"}));
  cs[2].trial_ended = true;
  cs[2].model_version = true;
  EXPECT_EQ(Sorted(CheckpointsToDelete(cs, {0, 0, 0, true})), (std::vector<std::string>{"b"}));
}

}  // namespace
}  // namespace ring
