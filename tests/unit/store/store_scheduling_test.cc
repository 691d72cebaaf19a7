// Live scheduling settings of experiments and schedulable agents behave the
// same in both Store implementations.
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
class StoreSchedulingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    exp_ = *store().CreateExperiment(ExperimentRecord{.name = "e", .owner = "o", .config_yaml = "x"}, "m");
  }
  Store& store() { return *holder_.store; }
  Holder holder_;
  int64_t exp_ = 0;
};

using Stores = testing::BothStores;
TYPED_TEST_SUITE(StoreSchedulingTest, Stores);

TYPED_TEST(StoreSchedulingTest, OverridesStartEmptyAndAreReplacedWhole) {
  EXPECT_EQ(*this->store().GetResourceOverrides(this->exp_), ResourceOverrides{});
  ResourceOverrides o{10, 3.0, std::nullopt};
  ASSERT_TRUE(this->store().SetResourceOverrides(this->exp_, o).ok());
  EXPECT_EQ(*this->store().GetResourceOverrides(this->exp_), o);
  o = {std::nullopt, 0.5, 8};
  ASSERT_TRUE(this->store().SetResourceOverrides(this->exp_, o).ok());
  EXPECT_EQ(*this->store().GetResourceOverrides(this->exp_), o);
  o = {30, std::nullopt, 2, 30, 2};  // with the bounds an admin set
  ASSERT_TRUE(this->store().SetResourceOverrides(this->exp_, o).ok());
  EXPECT_EQ(*this->store().GetResourceOverrides(this->exp_), o);
  EXPECT_EQ(this->store().SetResourceOverrides(this->exp_, {30, std::nullopt, 2, 0, 2}).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(*this->store().GetResourceOverrides(this->exp_), o);
}

TYPED_TEST(StoreSchedulingTest, BadOverridesAndUnknownExperimentsChangeNothing) {
  EXPECT_EQ(this->store().SetResourceOverrides(this->exp_, {100, std::nullopt, std::nullopt}).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store().SetResourceOverrides(this->exp_, {std::nullopt, 0.0, std::nullopt}).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(*this->store().GetResourceOverrides(this->exp_), ResourceOverrides{});
  EXPECT_EQ(this->store().SetResourceOverrides(999, {1, std::nullopt, std::nullopt}).code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(this->store().GetResourceOverrides(999).status().code(), ErrorCode::kNotFound);
}

TYPED_TEST(StoreSchedulingTest, DisabledAgentsStayDisabledWhenTheyReconnect) {
  AgentRecord a{"a1", "default", "10.0.0.1", AgentState::kConnected, {}, "", ""};
  ASSERT_TRUE(this->store().UpsertAgent(a).ok());
  EXPECT_TRUE((*this->store().ListAgents())[0].enabled);
  ASSERT_TRUE(this->store().SetAgentSchedulable("a1", false, true).ok());
  ASSERT_TRUE(this->store().UpsertAgent(a).ok());  // a hello after a reconnect
  auto agent = (*this->store().ListAgents())[0];
  EXPECT_FALSE(agent.enabled);
  EXPECT_TRUE(agent.draining);
  ASSERT_TRUE(this->store().SetAgentSchedulable("a1", true, true).ok());
  agent = (*this->store().ListAgents())[0];
  EXPECT_TRUE(agent.enabled);
  EXPECT_FALSE(agent.draining);  // only a disabled agent drains
  EXPECT_EQ(this->store().SetAgentSchedulable("nope", false, false).code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace ring
