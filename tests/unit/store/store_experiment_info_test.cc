// An experiment's name, description and labels edited after submit
// (PATCH /api/v1/experiments/{id}) behave the same in both stores.
#include <gtest/gtest.h>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

template <typename Holder>
class StoreExperimentInfoTest : public ::testing::Test {
 protected:
  Store& store() { return *holder_.store; }
  Holder holder_;
};

TYPED_TEST_SUITE(StoreExperimentInfoTest, testing::BothStores);

// Name, description and labels edited after submit: each given field is
// set, the others kept; the lifecycle's updates never touch them.
TYPED_TEST(StoreExperimentInfoTest, IsSetFieldByField) {
  Store& s = this->store();
  int64_t id = testing::NewExperiment(s, "first");
  auto fresh = s.GetExperiment(id);
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->description) << "the config's until set";
  EXPECT_FALSE(fresh->labels);
  ASSERT_TRUE(s.SetExperimentInfo(id, {"renamed", std::nullopt, std::nullopt}).ok());
  ASSERT_TRUE(s.SetExperimentInfo(id, {std::nullopt, "why it ran", std::nullopt}).ok());
  ASSERT_TRUE(
      s.SetExperimentInfo(id, {std::nullopt, std::nullopt, std::vector<std::string>{"a", "b c"}}).ok());
  ExperimentRecord changed = *s.GetExperiment(id);
  changed.state = RunState::kPaused;
  ASSERT_TRUE(s.UpdateExperiment(changed).ok());
  auto got = s.GetExperiment(id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->name, "renamed");
  EXPECT_EQ(got->description, "why it ran");
  EXPECT_EQ(got->labels, (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(got->state, RunState::kPaused);
  // Cleared: an empty description and no labels are values of their own.
  ASSERT_TRUE(s.SetExperimentInfo(id, {std::nullopt, "", std::vector<std::string>{}}).ok());
  got = s.GetExperiment(id);
  EXPECT_EQ(got->description, "");
  EXPECT_EQ(got->labels, std::vector<std::string>{});
  EXPECT_EQ(got->name, "renamed");
  EXPECT_EQ(s.ListExperiments(10, 0)->items[0].labels, std::vector<std::string>{});
  EXPECT_EQ(s.SetExperimentInfo(id + 100, {"x", std::nullopt, std::nullopt}).code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace ring
