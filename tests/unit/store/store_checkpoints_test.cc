// The checkpoint registry of both Store implementations behaves the same.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>
#include <type_traits>

#include "master/store/memory_store.h"
#include "master/store/migration.h"
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

using testing::MemoryStoreHolder;
using testing::ScratchDir;
using testing::SqliteStoreHolder;

template <typename Holder>
class StoreCheckpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto exp = store().CreateExperiment(ExperimentRecord{.name = "e", .owner = "o", .config_yaml = "x"}, "m");
    ASSERT_TRUE(exp.ok());
    TrialRecord t;
    t.experiment_id = *exp;
    trial_ = *store().CreateTrial(t);
  }
  Store& store() { return *holder_.store; }
  CheckpointRecord Ckpt(const std::string& uuid, int64_t batches) {
    CheckpointRecord c;
    c.uuid = uuid;
    c.trial_id = trial_;
    c.allocation_id = "1.0";
    c.batches = batches;
    c.storage = {"shared_fs", "/c", "run-1"};
    c.resources = {{"a", 1, "00"}};
    return c;
  }
  Holder holder_;
  int64_t trial_ = 0;
};

TYPED_TEST_SUITE(StoreCheckpointsTest, testing::BothStores);

TYPED_TEST(StoreCheckpointsTest, IssuedUuidsAreKeptOnceAndNeverReissued) {
  const std::string uuid = "0b0e6f57-7d1e-4f53-9a3c-6a1d1c0b9e11";
  CheckpointReservation r{uuid, this->trial_, "1.0", {"shared_fs", "/c", "run-1"}, ""};
  ASSERT_TRUE(this->store().ReserveCheckpoint(r).ok());
  EXPECT_EQ(this->store().ReserveCheckpoint(r).code(), ErrorCode::kConflict);
  auto got = this->store().GetCheckpointReservation(uuid);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->allocation_id, "1.0");
  EXPECT_EQ(got->storage, (CheckpointStorage{"shared_fs", "/c", "run-1"}));
  EXPECT_FALSE(got->created_at.empty());
  EXPECT_EQ(this->store().GetCheckpointReservation("0b0e6f57-7d1e-4f53-9a3c-6a1d1c0b9e12").status().code(),
            ErrorCode::kNotFound);
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt(uuid, 10)).ok());
  ASSERT_TRUE(this->store().DeleteCheckpointReservation(uuid).ok());
  EXPECT_EQ(this->store().GetCheckpointReservation(uuid).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(this->store().ReserveCheckpoint(r).code(), ErrorCode::kConflict) << "a registered uuid";
  EXPECT_TRUE(this->store().DeleteCheckpointReservation(uuid).ok()) << "missing is fine";
}

TYPED_TEST(StoreCheckpointsTest, AddGetAndListInBatchOrder) {
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("u-300", 300)).ok());
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("u-100", 100)).ok());
  auto got = this->store().GetCheckpoint("u-300");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->batches, 300);
  EXPECT_EQ(got->state, CheckpointState::kActive);
  EXPECT_EQ(got->resources, (std::vector<CheckpointFile>{{"a", 1, "00"}}));
  EXPECT_FALSE(got->created_at.empty());
  auto list = this->store().ListCheckpoints(this->trial_);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].uuid, "u-100");
  EXPECT_EQ((*list)[1].uuid, "u-300");
  EXPECT_TRUE(this->store().ListCheckpoints(this->trial_ + 100)->empty());
}

TYPED_TEST(StoreCheckpointsTest, RetriedRegistrationIsANoOpAndAClashIsAConflict) {
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("u", 100)).ok());
  EXPECT_TRUE(this->store().AddCheckpoint(this->Ckpt("u", 100)).ok());
  EXPECT_EQ(this->store().AddCheckpoint(this->Ckpt("u", 200)).code(), ErrorCode::kConflict);
  EXPECT_EQ(this->store().ListCheckpoints(this->trial_)->size(), 1u);
}

TYPED_TEST(StoreCheckpointsTest, BadInputIsRefused) {
  auto orphan = this->Ckpt("o", 1);
  orphan.trial_id = 9999;
  EXPECT_EQ(this->store().AddCheckpoint(orphan).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store().GetCheckpoint("missing").status().code(), ErrorCode::kNotFound);
}

TYPED_TEST(StoreCheckpointsTest, StateChanges) {
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("u", 100)).ok());
  ASSERT_TRUE(this->store().SetCheckpointState("u", CheckpointState::kDeleted).ok());
  EXPECT_EQ(this->store().GetCheckpoint("u")->state, CheckpointState::kDeleted);
  EXPECT_EQ(this->store().SetCheckpointState("nope", CheckpointState::kDeleted).code(), ErrorCode::kNotFound);
}

TYPED_TEST(StoreCheckpointsTest, EveryFieldRoundTrips) {
  CheckpointRecord c = this->Ckpt("full", 7);
  c.allocation_id = "3.2";
  c.metadata_json = R"({"framework":"none","step":7})";
  c.created_at = "ignored: the store sets it";
  ASSERT_TRUE(this->store().AddCheckpoint(c).ok());
  auto got = this->store().GetCheckpoint("full");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->uuid, "full");
  EXPECT_EQ(got->trial_id, this->trial_);
  EXPECT_EQ(got->allocation_id, "3.2");
  EXPECT_EQ(got->batches, 7);
  EXPECT_EQ(got->state, CheckpointState::kActive);
  EXPECT_EQ(got->storage, c.storage);
  EXPECT_EQ(got->resources, c.resources);
  EXPECT_EQ(got->metadata_json, c.metadata_json);
  EXPECT_NE(got->created_at, c.created_at);
  EXPECT_EQ(got->created_at.size(), std::string("2026-01-01T00:00:00.000Z").size()) << got->created_at;
}

TYPED_TEST(StoreCheckpointsTest, RetryKeepsTheFirstRegistration) {
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("u", 100)).ok());
  const std::string first_created = this->store().GetCheckpoint("u")->created_at;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CheckpointRecord retry = this->Ckpt("u", 100);
  retry.allocation_id = "1.1";
  retry.resources.clear();
  retry.metadata_json = R"({"retry":true})";
  ASSERT_TRUE(this->store().AddCheckpoint(retry).ok());
  auto got = this->store().GetCheckpoint("u");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->allocation_id, "1.0");
  EXPECT_EQ(got->resources, (std::vector<CheckpointFile>{{"a", 1, "00"}}));
  EXPECT_EQ(got->metadata_json, "{}");
  EXPECT_EQ(got->created_at, first_created);
  // A retry after garbage collection does not bring the checkpoint back.
  ASSERT_TRUE(this->store().SetCheckpointState("u", CheckpointState::kDeleted).ok());
  EXPECT_TRUE(this->store().AddCheckpoint(this->Ckpt("u", 100)).ok());
  EXPECT_EQ(this->store().GetCheckpoint("u")->state, CheckpointState::kDeleted);
}

TYPED_TEST(StoreCheckpointsTest, SameUuidForAnotherTrialIsAConflict) {
  TrialRecord t;
  t.experiment_id = this->store().GetTrial(this->trial_)->experiment_id;
  const int64_t other_trial = *this->store().CreateTrial(t);
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("u", 100)).ok());
  CheckpointRecord other = this->Ckpt("u", 100);
  other.trial_id = other_trial;
  EXPECT_EQ(this->store().AddCheckpoint(other).code(), ErrorCode::kConflict);
  EXPECT_TRUE(this->store().ListCheckpoints(other_trial)->empty());
  EXPECT_EQ(this->store().GetCheckpoint("u")->trial_id, this->trial_);
}

TYPED_TEST(StoreCheckpointsTest, EmptyUuidAndNegativeBatchesAreRefused) {
  EXPECT_EQ(this->store().AddCheckpoint(this->Ckpt("", 1)).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store().AddCheckpoint(this->Ckpt("neg", -1)).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(this->store().ListCheckpoints(this->trial_)->empty());
  EXPECT_EQ(this->store().GetCheckpoint("neg").status().code(), ErrorCode::kNotFound);
}

TYPED_TEST(StoreCheckpointsTest, ListHasBothStatesOrderedByBatchesThenCreation) {
  // Same batches: the one registered first comes first, whatever its uuid.
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("z-first", 200)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("a-second", 200)).ok());
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("m-low", 0)).ok());
  CheckpointRecord deleted = this->Ckpt("d", 100);
  deleted.state = CheckpointState::kDeleted;
  ASSERT_TRUE(this->store().AddCheckpoint(deleted).ok());
  ASSERT_TRUE(this->store().SetCheckpointState("m-low", CheckpointState::kDeleted).ok());
  auto list = this->store().ListCheckpoints(this->trial_);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 4u);
  EXPECT_EQ((*list)[0].uuid, "m-low");
  EXPECT_EQ((*list)[0].state, CheckpointState::kDeleted);
  EXPECT_EQ((*list)[1].uuid, "d");
  EXPECT_EQ((*list)[1].state, CheckpointState::kDeleted);
  EXPECT_EQ((*list)[2].uuid, "z-first");
  EXPECT_EQ((*list)[3].uuid, "a-second");
  EXPECT_EQ((*list)[3].state, CheckpointState::kActive);
}

TYPED_TEST(StoreCheckpointsTest, StateCanReturnToActive) {
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("u", 100)).ok());
  ASSERT_TRUE(this->store().SetCheckpointState("u", CheckpointState::kDeleted).ok());
  ASSERT_TRUE(this->store().SetCheckpointState("u", CheckpointState::kActive).ok());
  EXPECT_EQ(this->store().GetCheckpoint("u")->state, CheckpointState::kActive);
  EXPECT_EQ(this->store().SetCheckpointState("nope", CheckpointState::kDeleted).code(), ErrorCode::kNotFound);
}

// The checkpoint an experiment warm-starts from: kept with it, a registered
// checkpoint only, and listed while the experiment has not ended.
TYPED_TEST(StoreCheckpointsTest, WarmStartSourcesRoundTripAndOnlyLiveOnesAreListed) {
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("src", 100)).ok());
  ExperimentRecord e{.name = "warm", .owner = "o", .config_yaml = "x"};
  e.warm_start_checkpoint = "src";
  auto warm = this->store().CreateExperiment(e, "m");
  ASSERT_TRUE(warm.ok()) << warm.status().ToString();
  EXPECT_EQ(this->store().GetExperiment(*warm)->warm_start_checkpoint, "src");
  EXPECT_EQ(
      this->store().GetExperiment(this->store().GetTrial(this->trial_)->experiment_id)->warm_start_checkpoint,
      "");
  auto again = this->store().CreateExperiment(e, "m");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*this->store().ListLiveWarmStarts(), (std::vector<std::string>{"src"}));
  e.warm_start_checkpoint = "missing";
  EXPECT_FALSE(this->store().CreateExperiment(e, "m").ok());

  for (int64_t id : {*warm, *again}) {
    auto ended = *this->store().GetExperiment(id);
    ended.state = RunState::kCanceled;
    ASSERT_TRUE(this->store().UpdateExperiment(ended).ok());
    EXPECT_EQ(this->store().GetExperiment(id)->warm_start_checkpoint, "src");  // kept
  }
  EXPECT_TRUE(this->store().ListLiveWarmStarts()->empty());
}

TEST(StoreCheckpointsMigrationTest, ADatabaseOfTheFirstVersionUpgradesKeepingItsData) {
  ScratchDir dir;
  const std::string db = dir.path + "/ring.db";
  int64_t exp = 0;
  int64_t trial = 0;
  {
    std::vector<Migration> first_only = BuiltinMigrations();
    ASSERT_GE(first_only.size(), 2u);
    ASSERT_EQ(first_only[1].name, "checkpoints");
    first_only.resize(1);
    auto old = SqliteStore::Open(db, first_only);
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    EXPECT_EQ((*old)->schema_version(), 1);
  }
  {
    // Rows as a version-1 master wrote them (this build's statements name newer columns).
    auto raw = SqliteDb::Open(db);
    ASSERT_TRUE(raw.ok());
    exp = 1;
    ASSERT_TRUE((*raw)
                    ->Exec("INSERT INTO experiments (id, name, owner, config_yaml, state, created_at, "
                           "model_definition) VALUES (1, 'kept', 'o', 'x', 'ACTIVE', "
                           "'2026-01-01T00:00:00.000Z', CAST('m' AS BLOB));"
                           "INSERT INTO trials (experiment_id, state, hparams, created_at) VALUES (" +
                               std::to_string(exp) +
                               ", 'ACTIVE', '{\"lr\":0.5}', '2026-01-01T00:00:00.000Z');"
                               "INSERT INTO allocations (id, trial_id, state, created_at) VALUES ('1.0', 1, "
                               "'PENDING', '2026-01-01T00:00:00.000Z');",
                           "version-1 rows")
                    .ok());
    trial = 1;
  }
  auto upgraded = SqliteStore::Open(db);
  ASSERT_TRUE(upgraded.ok()) << upgraded.status().ToString();
  Store& store = **upgraded;
  EXPECT_EQ((*upgraded)->schema_version(), BuiltinMigrations().back().version);
  EXPECT_EQ(store.GetExperiment(exp)->name, "kept");
  EXPECT_EQ(*store.GetModelDefinition(exp), "m");
  EXPECT_EQ(store.GetTrial(trial)->hparams_json, R"({"lr":0.5})");
  EXPECT_FALSE(store.GetTrial(trial)->request_id.has_value());
  EXPECT_EQ(store.ListAllocations(trial)->size(), 1u);
  EXPECT_TRUE(store.ListCheckpoints(trial)->empty());
  CheckpointRecord c;
  c.uuid = "u";
  c.trial_id = trial;
  c.allocation_id = std::to_string(trial) + ".0";
  c.batches = 10;
  ASSERT_TRUE(store.AddCheckpoint(c).ok());
  EXPECT_EQ(store.ListCheckpoints(trial)->size(), 1u);
}

// Deleting an experiment removes it and every row of its trials, and
// nothing of another experiment; one that another experiment warm-starts
// from is kept (kConflict) until that one is gone.
TYPED_TEST(StoreCheckpointsTest, DeletingAnExperimentRemovesEveryRowOfItsTrials) {
  Store& s = this->store();
  const int64_t exp = s.GetTrial(this->trial_)->experiment_id;
  auto other = s.CreateExperiment(ExperimentRecord{.name = "other", .owner = "o", .config_yaml = "x"}, "m");
  ASSERT_TRUE(other.ok());
  TrialRecord t;
  t.experiment_id = *other;
  const int64_t other_trial = *s.CreateTrial(t);
  for (int64_t trial : {this->trial_, other_trial}) {
    MetricReport m;
    m.trial_id = trial;
    m.kind = MetricKind::kTraining;
    m.batches = 10;
    m.metrics_json = R"({"loss":1})";
    ASSERT_TRUE(s.AddMetrics({m}).ok());
    AllocationRecord a;
    a.id = std::to_string(trial) + ".0";
    a.task_id = s.GetTrial(trial)->task_id;
    a.trial_id = trial;
    a.token_hash = std::string(64, 'a');
    ASSERT_TRUE(s.CreateAllocation(a).ok());
    LogRecord l;
    l.trial_id = trial;
    l.allocation_id = a.id;
    l.line = "hello";
    ASSERT_TRUE(s.AddLogs({l}).ok());
  }
  ASSERT_TRUE(s.AddCheckpoint(this->Ckpt("11111111-1111-4111-8111-111111111111", 10)).ok());
  ASSERT_TRUE(s.MarkExperimentDeleting(exp).ok());
  ASSERT_TRUE(s.MarkExperimentDeleting(exp).ok()) << "again is fine";
  EXPECT_TRUE(s.GetExperiment(exp)->deleting);
  EXPECT_FALSE(s.GetExperiment(*other)->deleting);
  EXPECT_EQ(*s.ListDeletingExperiments(), std::vector<int64_t>{exp});
  const int64_t task = s.GetTrial(this->trial_)->task_id;

  ASSERT_TRUE(s.DeleteExperiment(exp).ok());
  EXPECT_EQ(s.GetExperiment(exp).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.GetTrial(this->trial_).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.GetTask(task).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.GetAllocation(std::to_string(this->trial_) + ".0").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.GetCheckpoint("11111111-1111-4111-8111-111111111111").status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(s.ListDeletingExperiments()->empty());
  EXPECT_EQ(s.DeleteExperiment(exp).code(), ErrorCode::kNotFound);
  // The other experiment is whole.
  EXPECT_EQ(s.GetMetrics(other_trial, MetricKind::kTraining)->size(), 1u);
  EXPECT_EQ(s.GetLogs(other_trial, -1, 0, 10)->size(), 1u);
  EXPECT_TRUE(s.GetAllocation(std::to_string(other_trial) + ".0").ok());
  EXPECT_EQ(s.ListExperiments(10, 0)->total, 1);

  // A checkpoint another experiment starts from keeps its experiment.
  CheckpointRecord source = this->Ckpt("22222222-2222-4222-8222-222222222222", 10);
  source.trial_id = other_trial;
  ASSERT_TRUE(s.AddCheckpoint(source).ok());
  ExperimentRecord warm{.name = "warm", .owner = "o", .config_yaml = "x"};
  warm.warm_start_checkpoint = source.uuid;
  auto warm_id = s.CreateExperiment(warm, "m");
  ASSERT_TRUE(warm_id.ok()) << warm_id.status().ToString();
  const Status kept = s.DeleteExperiment(*other);
  EXPECT_EQ(kept.code(), ErrorCode::kConflict) << kept.ToString();
  EXPECT_NE(kept.message().find("starts from checkpoint " + source.uuid), std::string::npos)
      << kept.message();
  EXPECT_TRUE(s.GetTrial(other_trial).ok()) << "nothing deleted";
  ASSERT_TRUE(s.DeleteExperiment(*warm_id).ok());
  ASSERT_TRUE(s.DeleteExperiment(*other).ok());
  EXPECT_EQ(s.ListExperiments(10, 0)->total, 0);
}

}  // namespace
}  // namespace ring
