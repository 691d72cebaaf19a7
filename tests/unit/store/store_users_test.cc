// Users and sessions behave the same in both Store implementations.
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
class StoreUsersTest : public ::testing::Test {
 protected:
  Store& store() { return *holder_.store; }
  int64_t AddUser(const std::string& name, UserRole role = UserRole::kUser) {
    auto id = store().CreateUser(UserRecord{.username = name, .password_hash = "$argon2id$x", .role = role});
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? *id : 0;
  }
  Holder holder_;
};

using Stores = testing::BothStores;
TYPED_TEST_SUITE(StoreUsersTest, Stores);

TYPED_TEST(StoreUsersTest, CreatesFindsListsAndUpdatesUsers) {
  const int64_t admin = this->AddUser("admin", UserRole::kAdmin);
  const int64_t ada = this->AddUser("ada");
  EXPECT_LT(admin, ada);
  auto got = this->store().GetUserByName("ada");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->id, ada);
  EXPECT_EQ(got->role, UserRole::kUser);
  EXPECT_TRUE(got->active);
  EXPECT_FALSE(got->created_at.empty());

  UserRecord changed = *got;
  changed.password_hash = "$argon2id$y";
  changed.role = UserRole::kAdmin;
  changed.active = false;
  changed.username = "renamed";  // not written: names never change
  ASSERT_TRUE(this->store().UpdateUser(changed).ok());
  auto after = this->store().GetUser(ada);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->username, "ada");
  EXPECT_EQ(after->password_hash, "$argon2id$y");
  EXPECT_EQ(after->role, UserRole::kAdmin);
  EXPECT_FALSE(after->active);

  auto all = this->store().ListUsers();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].username, "admin");
  EXPECT_EQ((*all)[1].username, "ada");
}

TYPED_TEST(StoreUsersTest, RefusesTakenNamesAndMissingUsers) {
  this->AddUser("ada");
  EXPECT_EQ(this->store().CreateUser(UserRecord{.username = "ada", .password_hash = "h"}).status().code(),
            ErrorCode::kConflict);
  EXPECT_EQ(this->store().GetUser(99).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(this->store().GetUserByName("bob").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(this->store().UpdateUser(UserRecord{.id = 99, .password_hash = "h"}).code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(this->store().ListUsers()->size(), 1u);
}

TYPED_TEST(StoreUsersTest, LinksAndUnlinksUnixAccounts) {
  const int64_t ada = this->AddUser("ada");
  const int64_t bob = this->AddUser("bob");
  EXPECT_FALSE(this->store().GetUser(ada)->unix_account.has_value());

  const UserUnixAccount account{1001, 1002, "ada", "team"};
  ASSERT_TRUE(this->store().SetUserUnixAccount(ada, account).ok());
  EXPECT_EQ(this->store().GetUser(ada)->unix_account, account);
  EXPECT_EQ(this->store().GetUserByName("ada")->unix_account, account);
  auto all = this->store().ListUsers();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0].unix_account, account);
  EXPECT_FALSE((*all)[1].unix_account.has_value());

  // Password, role and active changes keep the link.
  UserRecord changed = *this->store().GetUser(ada);
  changed.password_hash = "$argon2id$z";
  changed.unix_account.reset();  // not written by UpdateUser
  ASSERT_TRUE(this->store().UpdateUser(changed).ok());
  EXPECT_EQ(this->store().GetUser(ada)->unix_account, account);

  // Linked by number only: the names stay empty.
  ASSERT_TRUE(this->store().SetUserUnixAccount(bob, UserUnixAccount{4294967294, 7, "", ""}).ok());
  EXPECT_EQ(this->store().GetUser(bob)->unix_account, (UserUnixAccount{4294967294, 7, "", ""}));

  ASSERT_TRUE(this->store().SetUserUnixAccount(ada, std::nullopt).ok());
  EXPECT_FALSE(this->store().GetUser(ada)->unix_account.has_value());

  // Never root, never out of range; an unknown user is not found.
  for (const UserUnixAccount& bad : {UserUnixAccount{0, 1002, "", ""}, UserUnixAccount{1001, 0, "", ""},
                                     UserUnixAccount{-1, 5, "", ""}, UserUnixAccount{4294967295, 5, "", ""}})
    EXPECT_EQ(this->store().SetUserUnixAccount(bob, bad).code(), ErrorCode::kInvalidArgument)
        << bad.uid << ":" << bad.gid;
  EXPECT_EQ(this->store().GetUser(bob)->unix_account, (UserUnixAccount{4294967294, 7, "", ""}));
  EXPECT_EQ(this->store().SetUserUnixAccount(99, account).code(), ErrorCode::kNotFound);
}

TYPED_TEST(StoreUsersTest, SessionsAreFoundByHashDeletedAndExpired) {
  const int64_t ada = this->AddUser("ada");
  const int64_t bob = this->AddUser("bob");
  ASSERT_TRUE(this->store().CreateSession({"h1", ada, "", "2026-01-01T00:00:00.000Z"}).ok());
  ASSERT_TRUE(this->store().CreateSession({"h2", ada, "", "2030-01-01T00:00:00.000Z"}).ok());
  ASSERT_TRUE(this->store().CreateSession({"h3", bob, "", "2030-01-01T00:00:00.000Z"}).ok());
  EXPECT_EQ(this->store().CreateSession({"h3", ada, "", "2030-01-01T00:00:00.000Z"}).code(),
            ErrorCode::kConflict);
  EXPECT_FALSE(this->store().CreateSession({"h4", 99, "", "2030-01-01T00:00:00.000Z"}).ok());

  auto s = this->store().GetSession("h2");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->user_id, ada);
  EXPECT_EQ(s->expires_at, "2030-01-01T00:00:00.000Z");
  EXPECT_FALSE(s->created_at.empty());

  auto expired = this->store().DeleteExpiredSessions("2027-06-01T00:00:00.000Z");
  ASSERT_TRUE(expired.ok());
  EXPECT_EQ(*expired, 1);
  EXPECT_EQ(this->store().GetSession("h1").status().code(), ErrorCode::kNotFound);

  ASSERT_TRUE(this->store().DeleteSession("h2").ok());
  ASSERT_TRUE(this->store().DeleteSession("h2").ok());  // absent: no-op
  EXPECT_EQ(this->store().GetSession("h2").status().code(), ErrorCode::kNotFound);
  ASSERT_TRUE(this->store().CreateSession({"h5", bob, "", "2030-01-01T00:00:00.000Z"}).ok());
  ASSERT_TRUE(this->store().DeleteUserSessions(bob).ok());
  EXPECT_EQ(this->store().GetSession("h3").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(this->store().GetSession("h5").status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace ring
