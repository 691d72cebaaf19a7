// Accounts on the in-memory store with a clock the test moves: the admin at
// first start, sign-in and its lockout, sessions that expire or end, and who
// may create and change users.
#include "master/auth/accounts.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "master/api/commands.h"
#include "master/auth/passwords.h"
#include "master/store/memory_store.h"

namespace ring {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

class AccountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    accounts_.SetClockForTest([this] { return now_; });
    auto made = accounts_.EnsureAdmin("");
    ASSERT_TRUE(made.ok() && *made);
    admin_password_ = **made;
    auto login = accounts_.Login("admin", admin_password_, "10.0.0.1");
    ASSERT_TRUE(login.ok());
    admin_ = *accounts_.Authenticate(login->token);
  }

  MemoryStore store_;
  Accounts accounts_{store_, AccountsOptions{hours(1), 3}};
  Accounts::Clock::time_point now_ = Accounts::Clock::now();
  std::string admin_password_;
  Principal admin_;
};

TEST_F(AccountsTest, PasswordsAreStoredAsArgon2idHashesOnly) {
  auto user = store_.GetUserByName("admin");
  ASSERT_TRUE(user.ok());
  EXPECT_EQ(user->password_hash.rfind("$argon2id$", 0), 0u) << user->password_hash;
  EXPECT_EQ(user->password_hash.find(admin_password_), std::string::npos);
  EXPECT_TRUE(VerifyPassword(admin_password_, user->password_hash));
  EXPECT_FALSE(VerifyPassword(admin_password_ + "x", user->password_hash));
  EXPECT_FALSE(VerifyPassword(admin_password_, "plain text"));
  EXPECT_EQ(admin_password_.size(), 24u);
}

TEST_F(AccountsTest, TheAdminIsMadeOnceAndFromAFileWhenGiven) {
  auto again = accounts_.EnsureAdmin("");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);  // users exist: nothing made, nothing printed
  EXPECT_EQ(store_.ListUsers()->size(), 1u);

  MemoryStore fresh;
  Accounts other(fresh);
  const std::string file = ::testing::TempDir() + "/admin-password";
  std::ofstream(file) << "  from-the-file \n";
  auto made = other.EnsureAdmin(file);
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_FALSE(*made);
  EXPECT_TRUE(other.Login("admin", "from-the-file", "x").ok());

  MemoryStore short_one;
  Accounts refused(short_one);
  std::ofstream(file) << "short\n";
  auto bad = refused.EnsureAdmin(file);
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(file), std::string::npos);
  EXPECT_TRUE(short_one.ListUsers()->empty());
  EXPECT_EQ(refused.EnsureAdmin("/no/such/file").status().code(), ErrorCode::kInvalidArgument);
  std::remove(file.c_str());
}

TEST_F(AccountsTest, WrongNamesAndPasswordsGetTheSameAnswer) {
  auto wrong_password = accounts_.Login("admin", "not-the-password", "10.0.0.2");
  auto wrong_name = accounts_.Login("nobody", "not-the-password", "10.0.0.2");
  EXPECT_EQ(wrong_password.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(wrong_password.status().message(), wrong_name.status().message());
}

TEST_F(AccountsTest, RepeatedFailuresLockOneUserAtOneAddressForGrowingWaits) {
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(accounts_.Login("admin", "guess", "10.0.0.9").ok());
  auto locked = accounts_.Login("admin", admin_password_, "10.0.0.9");
  EXPECT_EQ(locked.status().code(), ErrorCode::kTooManyRequests);
  EXPECT_NE(locked.status().message().find("try again in 1 s"), std::string::npos)
      << locked.status().message();
  // Another address is not locked out.
  EXPECT_TRUE(accounts_.Login("admin", admin_password_, "10.0.0.8").ok());
  now_ += seconds(2);
  EXPECT_FALSE(accounts_.Login("admin", "guess", "10.0.0.9").ok());  // the 4th: 2 s
  EXPECT_NE(accounts_.Login("admin", admin_password_, "10.0.0.9").status().message().find("try again in 2 s"),
            std::string::npos);
  now_ += seconds(3);
  EXPECT_TRUE(accounts_.Login("admin", admin_password_, "10.0.0.9").ok());  // and the count starts over
  EXPECT_FALSE(accounts_.Login("admin", "guess", "10.0.0.9").ok());
  EXPECT_EQ(accounts_.Login("admin", admin_password_, "10.0.0.9").status().code(), ErrorCode::kOk);
}

TEST_F(AccountsTest, GuessesFromManyAddressesHoldNewAddressesForAMinuteAtMost) {
  Accounts accounts{store_, AccountsOptions{hours(1), 3, 4}};
  accounts.SetClockForTest([this] { return now_; });
  ASSERT_TRUE(accounts.Login("admin", admin_password_, "10.0.0.1").ok());  // the admin's own machine
  // One guess from each of four addresses: none reaches the per-address limit.
  for (int i = 0; i < 4; ++i)
    EXPECT_FALSE(accounts.Login("admin", "guess", "10.0.1." + std::to_string(i)).ok());
  auto held = accounts.Login("admin", admin_password_, "10.0.2.1");
  EXPECT_EQ(held.status().code(), ErrorCode::kTooManyRequests);
  EXPECT_NE(held.status().message().find("several addresses; try again in 1 s"), std::string::npos)
      << held.status().message();
  // Each further guess doubles the wait, up to a minute.
  for (int i = 0; i < 10; ++i) {
    now_ += seconds(61);
    EXPECT_FALSE(accounts.Login("admin", "guess", "10.0.3." + std::to_string(i)).ok());
  }
  EXPECT_NE(accounts.Login("admin", admin_password_, "10.0.2.1").status().message().find("try again in 60 s"),
            std::string::npos);
  // The admin's own address is never held; a minute after the last guess nobody is.
  EXPECT_TRUE(accounts.Login("admin", admin_password_, "10.0.0.1").ok());
  for (int i = 0; i < 4; ++i)
    EXPECT_FALSE(accounts.Login("admin", "guess", "10.0.4." + std::to_string(i)).ok());
  EXPECT_EQ(accounts.Login("admin", admin_password_, "10.0.2.1").status().code(),
            ErrorCode::kTooManyRequests);
  now_ += seconds(61);
  EXPECT_TRUE(accounts.Login("admin", admin_password_, "10.0.2.1").ok());
}

TEST_F(AccountsTest, SessionsExpireAndSignOut) {
  auto login = accounts_.Login("admin", admin_password_, "10.0.0.1");
  ASSERT_TRUE(login.ok());
  EXPECT_EQ(login->token.size(), 64u);
  EXPECT_TRUE(store_.GetSession(login->token).status().code() ==
              ErrorCode::kNotFound);  // only the hash is kept
  EXPECT_TRUE(accounts_.Authenticate(login->token).ok());
  now_ += hours(1) + seconds(1);
  auto expired = accounts_.Authenticate(login->token);
  EXPECT_EQ(expired.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_NE(expired.status().message().find("expired"), std::string::npos);

  auto second = accounts_.Login("admin", admin_password_, "10.0.0.1");
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(accounts_.Logout(second->token).ok());
  EXPECT_EQ(accounts_.Authenticate(second->token).status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(accounts_.Authenticate("").status().code(), ErrorCode::kUnauthenticated);
}

TEST_F(AccountsTest, OnlyAdminsCreateUsersAndChangeOthers) {
  auto ada = accounts_.CreateUser(admin_, "ada", "ada-password", UserRole::kUser);
  ASSERT_TRUE(ada.ok()) << ada.status().message();
  auto ada_login = accounts_.Login("ada", "ada-password", "10.0.0.3");
  ASSERT_TRUE(ada_login.ok());
  const Principal as_ada = *accounts_.Authenticate(ada_login->token);
  EXPECT_FALSE(as_ada.admin());

  EXPECT_EQ(accounts_.CreateUser(as_ada, "eve", "eve-password", UserRole::kAdmin).status().code(),
            ErrorCode::kPermissionDenied);
  EXPECT_EQ(accounts_.CreateUser(admin_, "ada", "another-password", UserRole::kUser).status().code(),
            ErrorCode::kConflict);
  EXPECT_EQ(accounts_.CreateUser(admin_, "../x", "a-good-password", UserRole::kUser).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(accounts_.CreateUser(admin_, "x", "short", UserRole::kUser).status().code(),
            ErrorCode::kInvalidArgument);

  EXPECT_EQ(
      accounts_.ChangeUser(as_ada, admin_.user_id, UserPatch{.password = "taken-over!"}).status().code(),
      ErrorCode::kPermissionDenied);
  EXPECT_EQ(accounts_.ChangeUser(as_ada, ada->id, UserPatch{.role = UserRole::kAdmin}).status().code(),
            ErrorCode::kPermissionDenied);
  EXPECT_EQ(accounts_.ChangeUser(admin_, admin_.user_id, UserPatch{.active = false}).status().code(),
            ErrorCode::kPermissionDenied);
  EXPECT_EQ(accounts_.ChangeUser(as_ada, ada->id, UserPatch{}).status().code(), ErrorCode::kInvalidArgument);

  // A new password ends the user's sessions; the new one signs in.
  ASSERT_TRUE(accounts_
                  .ChangeUser(as_ada, ada->id,
                              UserPatch{.password = "new-ada-password", .current_password = "ada-password"})
                  .ok());
  EXPECT_FALSE(accounts_.Authenticate(ada_login->token).ok());
  EXPECT_FALSE(accounts_.Login("ada", "ada-password", "10.0.0.3").ok());
  auto relogin = accounts_.Login("ada", "new-ada-password", "10.0.0.3");
  ASSERT_TRUE(relogin.ok());

  // Deactivation ends them too and stops signing in; a role change shows at once.
  ASSERT_TRUE(accounts_.ChangeUser(admin_, ada->id, UserPatch{.role = UserRole::kAdmin}).ok());
  EXPECT_TRUE(accounts_.Authenticate(relogin->token)->admin());
  ASSERT_TRUE(accounts_.ChangeUser(admin_, ada->id, UserPatch{.active = false}).ok());
  EXPECT_FALSE(accounts_.Authenticate(relogin->token).ok());
  auto refused = accounts_.Login("ada", "new-ada-password", "10.0.0.3");
  EXPECT_EQ(refused.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_NE(refused.status().message().find("deactivated"), std::string::npos);
}

TEST_F(AccountsTest, ChangingYourOwnPasswordTakesTheCurrentOne) {
  auto ada = accounts_.CreateUser(admin_, "ada", "ada-password", UserRole::kUser);
  ASSERT_TRUE(ada.ok());
  auto login = accounts_.Login("ada", "ada-password", "10.0.0.3");
  ASSERT_TRUE(login.ok());
  const Principal as_ada = *accounts_.Authenticate(login->token);

  // A stolen session alone cannot take the account over.
  auto missing = accounts_.ChangeUser(as_ada, ada->id, UserPatch{.password = "stolen-password"}, "10.0.0.3");
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("current_password"), std::string::npos);
  auto wrong = accounts_.ChangeUser(
      as_ada, ada->id, UserPatch{.password = "stolen-password", .current_password = "a-guess"}, "10.0.0.3");
  EXPECT_EQ(wrong.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(wrong.status().message().find("current_password"), std::string::npos);
  EXPECT_TRUE(accounts_.Authenticate(login->token).ok());  // nothing changed
  EXPECT_TRUE(accounts_.Login("ada", "ada-password", "10.0.0.4").ok());

  // Guessing it is counted like failed sign-ins: locked out after a few.
  for (int i = 0; i < 5; ++i)
    (void)accounts_.ChangeUser(
        as_ada, ada->id, UserPatch{.password = "stolen-password", .current_password = "guess"}, "10.0.0.3");
  EXPECT_EQ(
      accounts_
          .ChangeUser(as_ada, ada->id,
                      UserPatch{.password = "new-password", .current_password = "ada-password"}, "10.0.0.3")
          .status()
          .code(),
      ErrorCode::kTooManyRequests);
  now_ += seconds(600);
  ASSERT_TRUE(accounts_
                  .ChangeUser(as_ada, ada->id,
                              UserPatch{.password = "new-password", .current_password = "ada-password"},
                              "10.0.0.3")
                  .ok());

  // An admin resetting another user's password needs none.
  ASSERT_TRUE(accounts_.ChangeUser(admin_, ada->id, UserPatch{.password = "reset-by-admin"}).ok());
  EXPECT_TRUE(accounts_.Login("ada", "reset-by-admin", "10.0.0.5").ok());
}

TEST_F(AccountsTest, OnlyAdminsLinkUnixAccounts) {
  auto ada = accounts_.CreateUser(admin_, "ada", "ada-password", UserRole::kUser);
  ASSERT_TRUE(ada.ok());
  const Principal as_ada{ada->id, "ada", UserRole::kUser};
  const UserUnixAccount account{1001, 1001, "ada", ""};
  EXPECT_EQ(accounts_.ChangeUser(as_ada, ada->id, UserPatch{.unix_account = account}).status().code(),
            ErrorCode::kPermissionDenied);
  EXPECT_FALSE(store_.GetUser(ada->id)->unix_account.has_value());

  auto linked = accounts_.ChangeUser(admin_, ada->id, UserPatch{.unix_account = account});
  ASSERT_TRUE(linked.ok()) << linked.status().ToString();
  EXPECT_EQ(linked->unix_account, account);
  EXPECT_EQ(store_.GetUser(ada->id)->unix_account, account);
  EXPECT_EQ(accounts_
                .ChangeUser(as_ada, ada->id,
                            UserPatch{.unix_account = std::optional<UserUnixAccount>(std::nullopt)})
                .status()
                .code(),
            ErrorCode::kPermissionDenied);
  auto unlinked = accounts_.ChangeUser(
      admin_, ada->id, UserPatch{.unix_account = std::optional<UserUnixAccount>(std::nullopt)});
  ASSERT_TRUE(unlinked.ok());
  EXPECT_FALSE(unlinked->unix_account.has_value());
  EXPECT_FALSE(store_.GetUser(ada->id)->unix_account.has_value());
}

// The API decodes request bodies into typed changes; accounts never see JSON.
TEST(UserBodiesTest, DecodeIntoTypedChangesOrNameTheField) {
  EXPECT_EQ(*DecodeRole(nlohmann::json::object()), UserRole::kUser);
  EXPECT_EQ(*DecodeRole({{"role", "admin"}}), UserRole::kAdmin);
  auto root = DecodeRole({{"role", "root"}});
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.status().message(), "role must be \"admin\" or \"user\"");
  EXPECT_FALSE(DecodeRole({{"role", 1}}).ok());

  auto patch = DecodeUserPatch({{"password", "a-new-one"}, {"role", "user"}, {"active", false}});
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  EXPECT_EQ(patch->password, "a-new-one");
  EXPECT_EQ(patch->role, UserRole::kUser);
  EXPECT_EQ(patch->active, false);
  auto colour = DecodeUserPatch({{"colour", "red"}});
  ASSERT_FALSE(colour.ok());
  EXPECT_NE(colour.status().message().find("unknown field \"colour\""), std::string::npos);
  EXPECT_EQ(DecodeUserPatch(nlohmann::json::object()).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(DecodeUserPatch({{"active", "no"}}).status().message(), "active must be true or false");
  EXPECT_EQ(DecodeUserPatch({{"password", 7}}).status().message(), "password must be a string");
  EXPECT_EQ(DecodeUserPatch({{"password", "x"}, {"current_password", 7}}).status().message(),
            "current_password must be a string");
  EXPECT_EQ(DecodeUserPatch({{"password", "x"}, {"current_password", "y"}})->current_password, "y");
}

TEST(UserBodiesTest, DecodeUnixAccountsOrNameTheField) {
  auto linked =
      DecodeUserPatch({{"unix", {{"uid", 1001}, {"gid", 1002}, {"user", "ada"}, {"group", "team"}}}});
  ASSERT_TRUE(linked.ok()) << linked.status().ToString();
  ASSERT_TRUE(linked->unix_account.has_value());
  EXPECT_EQ(*linked->unix_account, (UserUnixAccount{1001, 1002, "ada", "team"}));
  auto numbers = DecodeUserPatch({{"unix", {{"uid", 4294967294}, {"gid", 1}}}});
  ASSERT_TRUE(numbers.ok()) << numbers.status().ToString();
  EXPECT_EQ(*numbers->unix_account, (UserUnixAccount{4294967294, 1, "", ""}));
  auto unlinked = DecodeUserPatch({{"unix", nullptr}});
  ASSERT_TRUE(unlinked.ok());
  ASSERT_TRUE(unlinked->unix_account.has_value());
  EXPECT_FALSE(unlinked->unix_account->has_value());

  const auto message = [](const nlohmann::json& unix) {
    return DecodeUserPatch({{"unix", unix}}).status().message();
  };
  EXPECT_EQ(message({{"uid", 0}, {"gid", 5}}),
            "unix.uid must be an integer from 1 to 4294967294 (tasks never run as root), got 0");
  EXPECT_EQ(message({{"uid", 5}, {"gid", 0}}).rfind("unix.gid must be", 0), 0u);
  EXPECT_EQ(message({{"uid", -1}, {"gid", 5}}).rfind("unix.uid must be", 0), 0u);
  EXPECT_EQ(message({{"uid", 4294967295}, {"gid", 5}}).rfind("unix.uid must be", 0), 0u);
  EXPECT_EQ(message({{"uid", 1.5}, {"gid", 5}}).rfind("unix.uid must be", 0), 0u);
  EXPECT_EQ(message({{"uid", "1001"}, {"gid", 5}}).rfind("unix.uid must be", 0), 0u);
  EXPECT_EQ(message({{"gid", 5}}), "unix.uid is required");
  EXPECT_EQ(message({{"uid", 5}}), "unix.gid is required");
  EXPECT_EQ(message({{"uid", 5}, {"gid", 5}, {"user", "-rf"}}).rfind("unix.user must be a Unix name", 0), 0u);
  EXPECT_EQ(message({{"uid", 5}, {"gid", 5}, {"group", std::string(40, 'a')}}).rfind("unix.group must be", 0),
            0u);
  EXPECT_NE(message({{"uid", 5}, {"gid", 5}, {"home", "/"}}).find("unknown field \"home\""),
            std::string::npos);
  EXPECT_EQ(message("alice").rfind("unix must be null or an object", 0), 0u);
}

}  // namespace
}  // namespace ring
