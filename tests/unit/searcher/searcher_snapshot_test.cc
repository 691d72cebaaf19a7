// Snapshot and restore: a simulated cluster drives whole searches (64-trial
// adaptive_asha, random, grid) with failures, repeats and reordering; at every
// step the searcher is snapshotted, restored (directly and through text),
// and the rest of the search replayed on the restored one, which must decide
// exactly what the original decided. Malformed snapshots are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "common/searcher/asha_plan.h"
#include "common/searcher/searcher.h"
#include "tests/unit/searcher/hyperparameter_range.h"

namespace ring::search {
namespace {

using nlohmann::json;
using Space = std::map<std::string, Hyperparameter>;

// A deterministic cluster: operations are queued in the order they were
// given; the first `window` of them run side by side and they complete in a
// rotating order. Closed trials report TrialClosed before the next
// completion. Some trials fail by their id, and some completions are reported twice.
struct Cluster {
  size_t window = 4;
  bool started = false;
  std::deque<TrainTo> ops;
  std::deque<RequestId> closes;
  std::deque<std::pair<RequestId, int64_t>> repeats;
  std::map<RequestId, json> hparams;
  std::map<RequestId, int64_t> trained;
  int64_t turn = 0;

  static double Metric(const json& hp, int64_t length) {
    const double lr = hp.contains("lr") ? hp["lr"].get<double>() : 0.01;
    const double units = hp.contains("units") ? hp["units"].get<double>() : 32;
    return std::pow(std::log10(lr) + 2.0, 2) + std::abs(units - 40) / 100 +
           50.0 / static_cast<double>(length);
  }

  std::vector<Action> Deliver(Searcher& s, std::vector<Action> out) {
    for (size_t i = 0; i < out.size(); ++i) {
      if (const auto* c = std::get_if<CreateTrial>(&out[i])) {
        hparams[c->request_id] = c->hparams;
        auto more = s.TrialCreated(c->request_id);
        out.insert(out.end(), more.begin(), more.end());
      } else if (const auto* t = std::get_if<TrainTo>(&out[i])) {
        ops.push_back(*t);
      } else if (const auto* c = std::get_if<CloseTrial>(&out[i])) {
        closes.push_back(c->request_id);
      }
    }
    return out;
  }

  // One event; nullopt when the cluster has nothing left to report.
  std::optional<std::vector<Action>> Step(Searcher& s) {
    if (!started) {
      started = true;
      return Deliver(s, s.Start());
    }
    if (!closes.empty()) {
      const RequestId id = closes.front();
      closes.pop_front();
      return Deliver(s, s.TrialClosed(id));
    }
    if (!repeats.empty()) {
      auto [id, length] = repeats.front();
      repeats.pop_front();
      return Deliver(s, s.ValidationCompleted(id, Metric(hparams[id], length), length));
    }
    if (ops.empty()) return std::nullopt;
    const size_t pick = static_cast<size_t>(turn++) % std::min(window, ops.size());
    const TrainTo op = ops[pick];
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(pick));
    const RequestId id = op.request_id;
    const bool first = !trained.count(id);
    trained[id] = std::max(trained[id], op.length);
    if (first && id % 7 == 3) return Deliver(s, s.TrialExitedEarly(id, ExitReason::kErrored));
    if (first && id % 11 == 5) return Deliver(s, s.TrialExitedEarly(id, ExitReason::kInvalidHparams));
    if (!first && id % 13 == 6) return Deliver(s, s.TrialExitedEarly(id, ExitReason::kCanceled));
    if (id % 17 == 8) return Deliver(s, s.TrialClosed(id));  // ended without a close: canceled
    if (id % 5 == 0) repeats.emplace_back(id, op.length);
    return Deliver(s, s.ValidationCompleted(id, Metric(hparams[id], op.length), op.length));
  }
};

std::vector<std::string> Strings(const std::vector<Action>& actions) {
  std::vector<std::string> out;
  for (const auto& a : actions) out.push_back(ToString(a));
  return out;
}

struct Recorded {
  std::vector<json> snapshots;  // before each step
  std::vector<Cluster> clusters;
  std::vector<double> progress;
  std::vector<std::vector<std::string>> actions;
};

Recorded RunAll(Searcher& s, Cluster c) {
  Recorded r;
  for (int guard = 0; guard < 100000; ++guard) {
    r.snapshots.push_back(s.Snapshot());
    r.clusters.push_back(c);
    r.progress.push_back(s.Progress(c.trained));
    auto actions = c.Step(s);
    if (!actions) return r;
    r.actions.push_back(Strings(*actions));
  }
  ADD_FAILURE() << "the search did not end";
  return r;
}

void ExpectRestoreEquivalentAtEveryStep(const SearcherConfig& config, const Space& space, uint64_t seed,
                                        size_t window) {
  auto created = Searcher::Create(config, space, seed);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Searcher original = std::move(created).value();
  Cluster cluster;
  cluster.window = window;
  const Recorded full = RunAll(original, cluster);
  ASSERT_TRUE(original.IsShutdown());
  ASSERT_GT(full.actions.size(), 10u);

  for (size_t k = 0; k < full.snapshots.size(); ++k) {
    for (bool through_text : {false, true}) {
      const json snapshot = through_text ? json::parse(full.snapshots[k].dump()) : full.snapshots[k];
      auto restored = Searcher::Restore(config, space, snapshot);
      ASSERT_TRUE(restored.ok()) << "step " << k << ": " << restored.status().ToString();
      ASSERT_EQ(restored->Snapshot(), full.snapshots[k]) << "step " << k;
      ASSERT_EQ(restored->Progress(full.clusters[k].trained), full.progress[k]) << "step " << k;
      Cluster c = full.clusters[k];
      for (size_t i = k; i < full.actions.size(); ++i) {
        auto actions = c.Step(*restored);
        ASSERT_TRUE(actions) << "step " << k << ": the restored search stopped at " << i;
        ASSERT_EQ(Strings(*actions), full.actions[i])
            << "restored at step " << k << ", differs at step " << i;
      }
      ASSERT_FALSE(c.Step(*restored)) << "step " << k;
      ASSERT_TRUE(restored->IsShutdown());
    }
  }
}

const Space kSpace{{"lr", Range(Hyperparameter::Type::kLog, -4, -1, 4)},
                   {"units", Range(Hyperparameter::Type::kInt, 8, 64, 3)}};

SearcherConfig Asha64() {
  SearcherConfig c;
  c.name = "adaptive_asha";
  c.max_trials = 64;
  c.max_length_batches = 256;
  c.divisor = 4;
  c.max_rungs = 4;
  c.mode = "standard";
  c.max_concurrent_trials = 8;
  return c;
}

TEST(SearcherSnapshotTest, AdaptiveAshaRestoredAtEveryStepDecidesTheSame) {
  ExpectRestoreEquivalentAtEveryStep(Asha64(), kSpace, 2024, 6);
}

TEST(SearcherSnapshotTest, AdaptiveAshaWithoutConcurrencyLimitAndLargerIsBetter) {
  auto c = Asha64();
  c.max_concurrent_trials = 0;
  c.divisor = 2;
  c.mode = "conservative";
  c.smaller_is_better = false;
  ExpectRestoreEquivalentAtEveryStep(c, kSpace, 7, 16);
}

// max_length: {epochs: 16} of 1000 records in batches of 64: rungs planned
// in epochs (3 of them; 4 in batches).
SearcherConfig EpochAsha() {
  auto c = Asha64();
  c.max_length = Length{Length::Unit::kEpochs, 16, false};
  c.max_length_batches = 250;
  c.records_per_unit = 1000;
  c.global_batch_size = 64;
  return c;
}

TEST(SearcherSnapshotTest, AdaptiveAshaInEpochsRestoredAtEveryStepDecidesTheSame) {
  ASSERT_EQ(AshaRungs(EpochAsha()), 3);
  ExpectRestoreEquivalentAtEveryStep(EpochAsha(), kSpace, 11, 6);
}

// A search stored before rungs were planned in max_length's unit keeps its
// rungs in batches: its trials are at those lengths.
TEST(SearcherSnapshotTest, ASearchPlannedInBatchesStaysInBatches) {
  SearcherConfig in_batches = EpochAsha();
  in_batches.records_per_unit = 0;
  ASSERT_EQ(AshaRungs(in_batches), 4);
  auto s = std::move(Searcher::Create(in_batches, kSpace, 3)).value();
  s.Start();
  nlohmann::json before = s.Snapshot();
  before.erase("in_unit");
  auto restored = Searcher::Restore(EpochAsha(), kSpace, before);
  ASSERT_TRUE(restored.ok()) << restored.status().message();
  EXPECT_EQ(restored->Snapshot()["method"], before["method"]);
  EXPECT_EQ(restored->Snapshot()["in_unit"], false);
}

TEST(SearcherSnapshotTest, RandomRestoredAtEveryStepDecidesTheSame) {
  SearcherConfig c;
  c.name = "random";
  c.max_trials = 24;
  c.max_concurrent_trials = 3;
  c.max_length_batches = 50;
  ExpectRestoreEquivalentAtEveryStep(c, kSpace, 99, 3);
}

TEST(SearcherSnapshotTest, GridAndSingleRestoredAtEveryStepDecideTheSame) {
  SearcherConfig c;
  c.name = "grid";
  c.max_concurrent_trials = 5;
  c.max_length_batches = 10;
  ExpectRestoreEquivalentAtEveryStep(c, kSpace, 5, 2);
  c.name = "single";
  auto s = Searcher::Create(c, kSpace, 5);
  ASSERT_TRUE(s.ok());
  Cluster cluster;
  EXPECT_EQ(RunAll(*s, cluster).actions.size(), 3u);  // start, validation, closed
}

TEST(SearcherSnapshotTest, SameSeedSameSearch) {
  auto run = [](uint64_t seed) {
    auto s = std::move(Searcher::Create(Asha64(), kSpace, seed)).value();
    return RunAll(s, Cluster{}).actions;
  };
  EXPECT_EQ(run(31), run(31));
  EXPECT_NE(run(31), run(32));
}

// A snapshot in the middle of a search, with the cluster as it was then.
std::pair<json, Cluster> MidRunAsha() {
  auto s = std::move(Searcher::Create(Asha64(), kSpace, 2024)).value();
  Cluster c;
  for (int i = 0; i < 60; ++i) c.Step(s);
  return {s.Snapshot(), c};
}

TEST(SearcherSnapshotTest, MalformedSnapshotsAreRefused) {
  const json good = MidRunAsha().first;
  ASSERT_TRUE(Searcher::Restore(Asha64(), kSpace, good).ok());
  auto refused = [&](const json& snapshot, const SearcherConfig& config = Asha64()) {
    auto r = Searcher::Restore(config, kSpace, snapshot);
    if (r.ok()) return std::string("accepted");
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    return r.status().message();
  };
  EXPECT_NE(refused(json()), "accepted");
  EXPECT_NE(refused(json::array()), "accepted");
  EXPECT_NE(refused(json("snapshot")), "accepted");
  EXPECT_NE(refused(json::parse("{}")), "accepted");

  auto with = [&](const std::string& pointer, const json& value) {
    json j = good;
    j[json::json_pointer(pointer)] = value;
    return j;
  };
  EXPECT_EQ(refused(with("/version", 2)), "searcher snapshot: version 2 is not supported");
  auto random = Asha64();
  random.name = "random";
  EXPECT_EQ(refused(good, random),
            "searcher snapshot: it is of a adaptive_asha searcher, the config names random");
  EXPECT_NE(refused(with("/rng/0", "xyz")), "accepted");
  EXPECT_NE(refused(with("/rng", json::array({"0000000000000000", "0000000000000000", "0000000000000000",
                                              "0000000000000000"}))),
            "accepted");
  EXPECT_NE(refused(with("/table/next_request_id", 1)), "accepted");
  EXPECT_NE(refused(with("/table/trials/0/id", 2)), "accepted");  // listed twice
  EXPECT_NE(refused(with("/table/trials/0/end", "exploded")), "accepted");
  EXPECT_NE(refused(with("/started", false)), "accepted");
  EXPECT_NE(refused(with("/shutdown", true)), "accepted");
  EXPECT_NE(refused(with("/method/brackets", json::array())), "accepted");
  EXPECT_NE(refused(with("/method/brackets/0/trials/0/1", 9)), "accepted");  // no rung 9
  EXPECT_NE(refused(with("/method/brackets/0/trials/0/0", 9999)), "accepted");
  EXPECT_NE(refused(with("/method/brackets/0/max_trials", -1)), "accepted");
  EXPECT_NE(refused(with("/method/invalid", 100)), "accepted");
  json unsorted = good;
  auto& rung0 = unsorted["method"]["brackets"][0]["rungs"][0];
  ASSERT_GE(rung0.size(), 2u);
  std::swap(rung0[0], rung0[rung0.size() - 1]);
  EXPECT_NE(refused(unsorted), "accepted");
}

// JSON pointers to every value in `j`, containers included.
void Pointers(const json& j, const std::string& at, std::vector<std::string>& out) {
  if (!at.empty()) out.push_back(at);
  if (j.is_object())
    for (const auto& [key, value] : j.items()) Pointers(value, at + "/" + key, out);
  if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) Pointers(j[i], at + "/" + std::to_string(i), out);
}

TEST(SearcherSnapshotTest, AnyDamagedFieldIsRefusedOrHarmless) {
  // Every leaf of a real snapshot replaced by values of the wrong kind: the
  // restore refuses it, or the search carries on without crashing.
  const auto [good, cluster] = MidRunAsha();
  std::vector<std::string> pointers;
  Pointers(good, "", pointers);
  int refused = 0;
  for (const auto& pointer : pointers) {
    for (const json& bad : {json("x"), json(-1), json(), json(1e300), json::object(), json(true)}) {
      json damaged = good;
      damaged[json::json_pointer(pointer)] = bad;
      auto r = Searcher::Restore(Asha64(), kSpace, damaged);
      if (!r.ok()) {
        ++refused;
        continue;
      }
      Cluster c = cluster;
      for (int i = 0; i < 40 && c.Step(*r); ++i) {
      }
      (void)r->Progress({});
    }
  }
  EXPECT_GT(refused, static_cast<int>(pointers.size()) * 4);
}

}  // namespace
}  // namespace ring::search
