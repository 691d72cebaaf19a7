// Searcher snapshots and their trials behave the same in both Store
// implementations: one step lands whole or not at all.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

using testing::MemoryStoreHolder;
using testing::ScratchDir;
using testing::SqliteStoreHolder;

template <typename Holder>
class StoreSearcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    exp_ = *store().CreateExperiment(ExperimentRecord{.name = "e", .owner = "o", .config_yaml = "x"}, "m");
  }
  Store& store() { return *holder_.store; }
  TrialRecord Trial(int64_t request_id, const std::string& hparams = "{}") {
    TrialRecord t;
    t.experiment_id = exp_;
    t.request_id = request_id;
    t.hparams_json = hparams;
    t.seed = 100 + request_id;
    return t;
  }
  Holder holder_;
  int64_t exp_ = 0;
};

using Stores = testing::BothStores;
TYPED_TEST_SUITE(StoreSearcherTest, Stores);

TYPED_TEST(StoreSearcherTest, NoSnapshotBeforeTheFirstStep) {
  EXPECT_EQ(this->store().GetSearcherSnapshot(this->exp_).status().code(), ErrorCode::kNotFound);
}

TYPED_TEST(StoreSearcherTest, StepCreatesTrialsAndReplacesTheSnapshot) {
  auto ids = this->store().CommitSearcherStep(
      {this->exp_, R"({"v":1})", {this->Trial(1, R"({"lr":0.1})"), this->Trial(2)}});
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  ASSERT_EQ(ids->size(), 2u);
  EXPECT_EQ(*this->store().GetSearcherSnapshot(this->exp_), R"({"v":1})");
  auto first = this->store().GetTrial((*ids)[0]);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->request_id, 1);
  EXPECT_EQ(first->seed, 101);
  EXPECT_EQ(first->hparams_json, R"({"lr":0.1})");

  ASSERT_TRUE(this->store().CommitSearcherStep({this->exp_, R"({"v":2})", {}}).ok());
  EXPECT_EQ(*this->store().GetSearcherSnapshot(this->exp_), R"({"v":2})");
  EXPECT_EQ(this->store().ListTrials(this->exp_)->size(), 2u);
  // A trial made outside the searcher has no request id.
  TrialRecord plain;
  plain.experiment_id = this->exp_;
  auto id = this->store().CreateTrial(plain);
  ASSERT_TRUE(id.ok());
  EXPECT_FALSE(this->store().GetTrial(*id)->request_id.has_value());
}

TYPED_TEST(StoreSearcherTest, ARepeatedRequestIdWritesNothing) {
  ASSERT_TRUE(this->store().CommitSearcherStep({this->exp_, R"({"v":1})", {this->Trial(1)}}).ok());
  auto again = this->store().CommitSearcherStep({this->exp_, R"({"v":2})", {this->Trial(2), this->Trial(1)}});
  EXPECT_EQ(again.status().code(), ErrorCode::kConflict);
  EXPECT_EQ(*this->store().GetSearcherSnapshot(this->exp_), R"({"v":1})");
  EXPECT_EQ(this->store().ListTrials(this->exp_)->size(), 1u);
}

TYPED_TEST(StoreSearcherTest, TrialsNeedARequestIdAndTheirExperiment) {
  TrialRecord bare;
  bare.experiment_id = this->exp_;
  EXPECT_EQ(this->store().CommitSearcherStep({this->exp_, "{}", {bare}}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store().GetSearcherSnapshot(this->exp_).status().code(), ErrorCode::kNotFound);
}

TEST(StoreSearcherSqliteTest, SnapshotSurvivesReopening) {
  ScratchDir dir;
  const std::string path = dir.path + "/ring.db";
  int64_t exp = 0;
  {
    auto store = std::move(SqliteStore::Open(path)).value();
    exp = *store->CreateExperiment(ExperimentRecord{.name = "e", .owner = "o", .config_yaml = "x"}, "m");
    TrialRecord t;
    t.experiment_id = exp;
    t.request_id = 7;
    ASSERT_TRUE(store->CommitSearcherStep({exp, R"({"rng":"123"})", {t}}).ok());
  }
  auto store = std::move(SqliteStore::Open(path)).value();
  EXPECT_EQ(*store->GetSearcherSnapshot(exp), R"({"rng":"123"})");
  EXPECT_EQ((*store->ListTrials(exp))[0].request_id, 7);
}

}  // namespace
}  // namespace ring
