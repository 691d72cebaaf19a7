// Metric writes in both Store implementations: a trial's total batches rise
// with its training reports and never fall, and many writers at once (which
// SqliteStore groups into shared commits) each get their own answer.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

template <typename Holder>
class StoreMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    exp_ = *store().CreateExperiment(ExperimentRecord{.name = "e", .owner = "o", .config_yaml = "x"}, "m");
  }
  Store& store() { return *holder_.store; }
  int64_t NewTrial() {
    TrialRecord t;
    t.experiment_id = exp_;
    return *store().CreateTrial(t);
  }
  int64_t TotalBatches(int64_t trial) { return store().GetTrial(trial)->total_batches; }
  Holder holder_;
  int64_t exp_ = 0;
};

MetricReport Report(int64_t trial, MetricKind kind, int64_t batches) {
  MetricReport r;
  r.trial_id = trial;
  r.kind = kind;
  r.batches = batches;
  r.metrics_json = R"({"loss":1})";
  r.allocation_id = std::to_string(trial) + ".0";
  return r;
}

using Stores = testing::BothStores;
TYPED_TEST_SUITE(StoreMetricsTest, Stores);

TYPED_TEST(StoreMetricsTest, TrainingReportsRaiseTheTrialsTotalBatches) {
  const int64_t a = this->NewTrial(), b = this->NewTrial();
  ASSERT_TRUE(this->store()
                  .AddMetrics({Report(a, MetricKind::kTraining, 300), Report(a, MetricKind::kTraining, 100),
                               Report(b, MetricKind::kTraining, 50)})
                  .ok());
  EXPECT_EQ(this->TotalBatches(a), 300);
  EXPECT_EQ(this->TotalBatches(b), 50);
  // Validation reports and older training reports leave it where it is.
  ASSERT_TRUE(
      this->store()
          .AddMetrics({Report(a, MetricKind::kValidation, 900), Report(a, MetricKind::kTraining, 200)})
          .ok());
  EXPECT_EQ(this->TotalBatches(a), 300);
  // A refused batch raises nothing.
  EXPECT_FALSE(this->store()
                   .AddMetrics({Report(a, MetricKind::kTraining, 1000), Report(a, MetricKind::kTraining, -1)})
                   .ok());
  EXPECT_EQ(this->TotalBatches(a), 300);
}

TYPED_TEST(StoreMetricsTest, AnUpdateReadBeforeAReportDoesNotLowerTheTotal) {
  const int64_t trial = this->NewTrial();
  TrialRecord stale = *this->store().GetTrial(trial);
  ASSERT_TRUE(this->store().AddMetrics({Report(trial, MetricKind::kTraining, 400)}).ok());
  stale.state = RunState::kPaused;
  ASSERT_TRUE(this->store().UpdateTrial(stale).ok());
  TrialRecord now = *this->store().GetTrial(trial);
  EXPECT_EQ(now.total_batches, 400);
  EXPECT_EQ(now.state, RunState::kPaused);
  now.total_batches = 500;
  ASSERT_TRUE(this->store().UpdateTrial(now).ok());
  EXPECT_EQ(this->TotalBatches(trial), 500);
}

TYPED_TEST(StoreMetricsTest, ConcurrentWritersEachGetTheirOwnAnswer) {
  constexpr int kWriters = 16, kBatches = 20, kPerBatch = 10;
  const int64_t trial = this->NewTrial();
  std::atomic<int> refused = 0, wrong = 0;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kBatches; ++i) {
        std::vector<MetricReport> batch;
        const int64_t first = (int64_t{w} * kBatches + i) * kPerBatch;
        for (int k = 0; k < kPerBatch; ++k) batch.push_back(Report(trial, MetricKind::kTraining, first + k));
        // Every fifth batch of odd writers carries a bad report: that batch
        // alone is refused, whoever shares its commit.
        const bool bad = w % 2 == 1 && i % 5 == 0;
        if (bad) batch.back().batches = -1;
        auto added = this->store().AddMetrics(batch);
        if (bad) {
          refused += !added.ok() && added.status().code() == ErrorCode::kInvalidArgument;
        } else {
          wrong += !added.ok() || *added != kPerBatch;
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  const int bad_batches = (kWriters / 2) * (kBatches / 5);
  EXPECT_EQ(refused.load(), bad_batches);
  EXPECT_EQ(wrong.load(), 0);
  auto stored = this->store().GetMetrics(trial, MetricKind::kTraining);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->size(), static_cast<size_t>((kWriters * kBatches - bad_batches) * kPerBatch));
  for (const auto& r : *stored) {
    const int64_t batch = r.batches / kPerBatch;
    const bool bad = (batch / kBatches) % 2 == 1 && (batch % kBatches) % 5 == 0;
    EXPECT_FALSE(bad) << "a report of a refused batch was stored: " << r.batches;
  }
  // The last writer's last batch is good (writer 15, batch 19), so the total is its top report.
  EXPECT_EQ(this->TotalBatches(trial), int64_t{kWriters} * kBatches * kPerBatch - 1);
}

}  // namespace
}  // namespace ring
