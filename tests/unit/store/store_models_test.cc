// The model registry behaves the same in both Store implementations: names
// are unique, versions count up per model and are never given twice, a
// version needs a registered checkpoint, deleting a model takes its
// versions, and a checkpoint that is a version keeps its experiment.
#include <gtest/gtest.h>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

template <typename Holder>
class StoreModelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    experiment_ = testing::NewExperiment(store());
    const int64_t trial = testing::NewTrial(store(), experiment_);
    for (const char* uuid : {"c-1", "c-2"}) {
      CheckpointRecord c;
      c.uuid = uuid;
      c.trial_id = trial;
      c.allocation_id = "1.0";
      c.batches = uuid[2] == '1' ? 100 : 200;
      c.storage = {"shared_fs", "/c", "run-1"};
      ASSERT_TRUE(store().AddCheckpoint(c).ok());
    }
  }
  Store& store() { return *holder_.store; }
  ModelVersionRecord Version(const std::string& model, const std::string& uuid) {
    ModelVersionRecord v;
    v.model = model;
    v.checkpoint_uuid = uuid;
    v.name = "v-" + uuid;
    v.notes = "trained on\nall of it";
    v.metadata_json = R"({"accuracy":0.9})";
    v.labels = {"prod"};
    v.created_by = "ada";
    return v;
  }
  Holder holder_;
  int64_t experiment_ = 0;
};

TYPED_TEST_SUITE(StoreModelsTest, testing::BothStores);

TYPED_TEST(StoreModelsTest, ModelsAreCreatedOnceListedByNameUpdatedAndDeleted) {
  Store& s = this->store();
  auto mnist = s.CreateModel({.name = "mnist", .description = "digits", .labels = {"cv"}, .owner = "ada"});
  ASSERT_TRUE(mnist.ok()) << mnist.status().ToString();
  EXPECT_GT(mnist->id, 0);
  EXPECT_EQ(mnist->owner, "ada");
  EXPECT_TRUE(testing::LooksLikeRfc3339(mnist->created_at)) << mnist->created_at;
  EXPECT_EQ(mnist->num_versions, 0);
  ASSERT_TRUE(s.CreateModel({.name = "bert", .owner = "bob"}).ok());
  EXPECT_EQ(s.CreateModel({.name = "mnist", .owner = "bob"}).status().code(), ErrorCode::kConflict);

  auto list = s.ListModels();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "bert");
  EXPECT_EQ((*list)[1].name, "mnist");
  EXPECT_EQ((*list)[1].labels, (std::vector<std::string>{"cv"}));

  ASSERT_TRUE(
      s.UpdateModel("mnist", {.labels = std::vector<std::string>{"cv", "small"}, .archived = true}).ok());
  auto updated = s.GetModel("mnist");
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->description, "digits") << "absent fields stay";
  EXPECT_EQ(updated->labels, (std::vector<std::string>{"cv", "small"}));
  EXPECT_TRUE(updated->archived);
  EXPECT_EQ(s.UpdateModel("nope", {}).code(), ErrorCode::kNotFound);

  auto removed = s.DeleteModel("bert");
  ASSERT_TRUE(removed.ok());
  EXPECT_TRUE(removed->empty());
  EXPECT_EQ(s.GetModel("bert").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.DeleteModel("bert").status().code(), ErrorCode::kNotFound);
}

TYPED_TEST(StoreModelsTest, VersionsCountUpAndAreNeverGivenTwice) {
  Store& s = this->store();
  ASSERT_TRUE(s.CreateModel({.name = "mnist", .owner = "ada"}).ok());
  auto one = s.AddModelVersion(this->Version("mnist", "c-1"));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->version, 1);
  EXPECT_EQ(one->model, "mnist");
  EXPECT_TRUE(testing::LooksLikeRfc3339(one->created_at));
  auto two = s.AddModelVersion(this->Version("mnist", "c-2"));
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->version, 2);
  EXPECT_EQ(s.GetModel("mnist")->num_versions, 2);
  EXPECT_EQ(s.AddModelVersion(this->Version("mnist", "c-9")).status().code(), ErrorCode::kInvalidArgument)
      << "a checkpoint that is not registered";
  EXPECT_EQ(s.AddModelVersion(this->Version("nope", "c-1")).status().code(), ErrorCode::kNotFound);

  auto got = s.GetModelVersion("mnist", 1);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->checkpoint_uuid, "c-1");
  EXPECT_EQ(got->notes, "trained on\nall of it");
  EXPECT_EQ(got->metadata_json, R"({"accuracy":0.9})");
  EXPECT_EQ(got->labels, (std::vector<std::string>{"prod"}));
  EXPECT_EQ(got->created_by, "ada");
  EXPECT_EQ(s.GetModelVersion("mnist", 3).status().code(), ErrorCode::kNotFound);

  ASSERT_TRUE(s.UpdateModelVersion("mnist", 1, {.notes = std::string("retrained")}).ok());
  got = s.GetModelVersion("mnist", 1);
  EXPECT_EQ(got->notes, "retrained");
  EXPECT_EQ(got->name, "v-c-1") << "absent fields stay";
  EXPECT_EQ(s.UpdateModelVersion("mnist", 7, {}).code(), ErrorCode::kNotFound);

  // The latest deleted: its number is not given again.
  ASSERT_TRUE(s.DeleteModelVersion("mnist", 2).ok());
  EXPECT_EQ(s.DeleteModelVersion("mnist", 2).code(), ErrorCode::kNotFound);
  auto three = s.AddModelVersion(this->Version("mnist", "c-2"));
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->version, 3);
  auto versions = s.ListModelVersions("mnist");
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].version, 1);
  EXPECT_EQ((*versions)[1].version, 3);
  EXPECT_EQ(s.ListModelVersions("nope").status().code(), ErrorCode::kNotFound);
}

TYPED_TEST(StoreModelsTest, CheckpointsThatAreVersionsAreFoundAndKeepTheirExperiment) {
  Store& s = this->store();
  ASSERT_TRUE(s.CreateModel({.name = "a-model", .owner = "ada"}).ok());
  ASSERT_TRUE(s.CreateModel({.name = "b-model", .owner = "ada"}).ok());
  ASSERT_TRUE(s.AddModelVersion(this->Version("b-model", "c-1")).ok());
  ASSERT_TRUE(s.AddModelVersion(this->Version("a-model", "c-1")).ok());
  ASSERT_TRUE(s.AddModelVersion(this->Version("a-model", "c-1")).ok()) << "the same checkpoint twice is fine";
  EXPECT_EQ(*s.ListModelVersionCheckpoints(), (std::vector<std::string>{"c-1"}));
  auto of_checkpoint = s.ListCheckpointModelVersions("c-1");
  ASSERT_TRUE(of_checkpoint.ok());
  ASSERT_EQ(of_checkpoint->size(), 3u);
  EXPECT_EQ((*of_checkpoint)[0].model, "a-model");
  EXPECT_EQ((*of_checkpoint)[1].version, 2);
  EXPECT_EQ((*of_checkpoint)[2].model, "b-model");
  EXPECT_TRUE(s.ListCheckpointModelVersions("c-2")->empty());
  EXPECT_EQ(s.ListExperimentModelVersions(this->experiment_)->size(), 3u);
  EXPECT_TRUE(s.ListExperimentModelVersions(this->experiment_ + 1)->empty());

  Status refused = s.DeleteExperiment(this->experiment_);
  EXPECT_EQ(refused.code(), ErrorCode::kConflict);
  EXPECT_NE(refused.message().find("checkpoint c-1 of experiment " + std::to_string(this->experiment_) +
                                   " is version 1 of model a-model"),
            std::string::npos)
      << refused.message();
  EXPECT_TRUE(s.GetCheckpoint("c-1").ok()) << "nothing was deleted";

  // Deleting a model takes its versions; the experiment goes once none is left.
  auto removed = s.DeleteModel("a-model");
  ASSERT_TRUE(removed.ok());
  ASSERT_EQ(removed->size(), 2u);
  EXPECT_EQ((*removed)[0].checkpoint_uuid, "c-1");
  ASSERT_TRUE(s.DeleteModelVersion("b-model", 1).ok());
  EXPECT_TRUE(s.ListModelVersionCheckpoints()->empty());
  EXPECT_TRUE(s.DeleteExperiment(this->experiment_).ok());
}

}  // namespace
}  // namespace ring
