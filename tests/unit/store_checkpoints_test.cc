// The checkpoint registry of both Store implementations behaves the same.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <type_traits>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"

namespace ring {
namespace {

struct SqliteStoreHolder {
  SqliteStoreHolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ring_ckpt_XXXXXX").string();
    dir = mkdtemp(pattern.data());
    store = std::move(SqliteStore::Open(dir + "/ring.db")).value();
  }
  ~SqliteStoreHolder() {
    store.reset();
    std::filesystem::remove_all(dir);
  }
  std::string dir;
  std::unique_ptr<Store> store;
};

struct MemoryStoreHolder {
  std::unique_ptr<Store> store = std::make_unique<MemoryStore>();
};

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
    c.storage_json = R"({"type":"shared_fs","host_path":"/c"})";
    c.resources_json = R"([{"path":"a","size":1,"sha256":"00"}])";
    return c;
  }
  Holder holder_;
  int64_t trial_ = 0;
};

using Holders = ::testing::Types<SqliteStoreHolder, MemoryStoreHolder>;
TYPED_TEST_SUITE(StoreCheckpointsTest, Holders);

TYPED_TEST(StoreCheckpointsTest, AddGetAndListInBatchOrder) {
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("u-300", 300)).ok());
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("u-100", 100)).ok());
  auto got = this->store().GetCheckpoint("u-300");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->batches, 300);
  EXPECT_EQ(got->state, "ACTIVE");
  EXPECT_EQ(got->resources_json, R"([{"path":"a","size":1,"sha256":"00"}])");
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
  auto bad_state = this->Ckpt("s", 1);
  bad_state.state = "GONE";
  EXPECT_EQ(this->store().AddCheckpoint(bad_state).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store().GetCheckpoint("missing").status().code(), ErrorCode::kNotFound);
}

TYPED_TEST(StoreCheckpointsTest, StateChanges) {
  ASSERT_TRUE(this->store().AddCheckpoint(this->Ckpt("u", 100)).ok());
  ASSERT_TRUE(this->store().SetCheckpointState("u", "DELETED").ok());
  EXPECT_EQ(this->store().GetCheckpoint("u")->state, "DELETED");
  EXPECT_EQ(this->store().SetCheckpointState("u", "WHATEVER").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store().SetCheckpointState("nope", "DELETED").code(), ErrorCode::kNotFound);
}

TEST(StoreCheckpointsMigrationTest, ADatabaseOfTheFirstVersionUpgradesKeepingItsData) {
  std::string pattern = (std::filesystem::temp_directory_path() / "ring_upgrade_XXXXXX").string();
  const std::string dir = mkdtemp(pattern.data());
  const std::string db = dir + "/ring.db";
  int64_t trial = 0;
  {
    auto old = SqliteStore::Open(db, {BuiltinMigrations().front()});
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    EXPECT_EQ((*old)->schema_version(), 1);
    auto exp =
        (*old)->CreateExperiment(ExperimentRecord{.name = "kept", .owner = "o", .config_yaml = "x"}, "m");
    TrialRecord t;
    t.experiment_id = *exp;
    trial = *(*old)->CreateTrial(t);
  }
  auto upgraded = SqliteStore::Open(db);
  ASSERT_TRUE(upgraded.ok()) << upgraded.status().ToString();
  EXPECT_EQ((*upgraded)->schema_version(), static_cast<int>(BuiltinMigrations().size()));
  EXPECT_EQ((*upgraded)->GetExperiment(1)->name, "kept");
  CheckpointRecord c;
  c.uuid = "u";
  c.trial_id = trial;
  c.allocation_id = "1.0";
  EXPECT_TRUE((*upgraded)->AddCheckpoint(c).ok());
  upgraded->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ring
