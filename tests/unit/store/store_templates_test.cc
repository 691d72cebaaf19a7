// Config templates behave the same in both Store implementations: set
// creates or replaces (the first owner kept), list by name, get and delete
// answer kNotFound for a name not there.
#include <gtest/gtest.h>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

template <typename Holder>
class StoreTemplatesTest : public ::testing::Test {
 protected:
  Store& store() { return *holder_.store; }
  Holder holder_;
};

TYPED_TEST_SUITE(StoreTemplatesTest, testing::BothStores);

TYPED_TEST(StoreTemplatesTest, SetReplacesKeepingTheOwnerAndListsByName) {
  Store& s = this->store();
  ASSERT_TRUE(s.SetTemplate({"gpu", "resources:\n  slots_per_trial: 2\n", "ada"}).ok());
  ASSERT_TRUE(s.SetTemplate({"base", "max_restarts: 1\n", "bob"}).ok());
  auto first = s.GetTemplate("gpu");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->owner, "ada");
  EXPECT_TRUE(testing::LooksLikeRfc3339(first->created_at)) << first->created_at;
  ASSERT_TRUE(s.SetTemplate({"gpu", "resources:\n  slots_per_trial: 4\n", "bob"}).ok());
  auto replaced = s.GetTemplate("gpu");
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(replaced->config_yaml, "resources:\n  slots_per_trial: 4\n");
  EXPECT_EQ(replaced->owner, "ada") << "the first owner stays";
  EXPECT_EQ(replaced->created_at, first->created_at);
  auto list = s.ListTemplates();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "base");
  EXPECT_EQ((*list)[1].name, "gpu");
  ASSERT_TRUE(s.DeleteTemplate("base").ok());
  EXPECT_EQ(s.DeleteTemplate("base").code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.GetTemplate("base").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.ListTemplates()->size(), 1u);
}

}  // namespace
}  // namespace ring
