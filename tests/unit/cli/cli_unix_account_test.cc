// `ring user link-unix`: the account from numbers or from this host's
// account database, and what is refused before the master is asked.
#include <grp.h>
#include <pwd.h>

#include <gtest/gtest.h>

#include "cli/unix_account.h"

namespace ring::cli {
namespace {

TEST(UnixAccountTest, ByNumberTakesBothIdsAndNoNames) {
  auto unix = ResolveUnixAccount({.username = "ada", .uid = 5001, .gid = 5002});
  ASSERT_TRUE(unix.ok()) << unix.status().ToString();
  EXPECT_EQ(*unix, (nlohmann::json{{"uid", 5001}, {"gid", 5002}, {"user", ""}, {"group", ""}}));
  EXPECT_EQ(DescribeUnixAccount(*unix), "5001:5002");

  auto no_gid = ResolveUnixAccount({.username = "ada", .uid = 5001});
  ASSERT_FALSE(no_gid.ok());
  EXPECT_NE(no_gid.status().message().find("--gid"), std::string::npos);
  auto nothing = ResolveUnixAccount({.username = "ada"});
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().message().find("--uid"), std::string::npos);
}

TEST(UnixAccountTest, ByNameLooksUpThisHost) {
  passwd* root = ::getpwuid(0);
  ASSERT_NE(root, nullptr);
  const std::string name = root->pw_name;
  auto by_name = ResolveUnixAccount({.username = "ada", .unix_user = name});
  ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();
  EXPECT_EQ((*by_name)["uid"], 0);  // resolved as it is; the master refuses root
  EXPECT_EQ((*by_name)["gid"], static_cast<int64_t>(root->pw_gid));
  EXPECT_EQ((*by_name)["user"], name);

  group* g = ::getgrgid(root->pw_gid);
  ASSERT_NE(g, nullptr);
  const std::string group_name = g->gr_name;
  auto with_group = ResolveUnixAccount({.username = "ada", .uid = 7, .unix_group = group_name});
  ASSERT_TRUE(with_group.ok()) << with_group.status().ToString();
  EXPECT_EQ(*with_group,
            (nlohmann::json{
                {"uid", 7}, {"gid", static_cast<int64_t>(g->gr_gid)}, {"user", ""}, {"group", group_name}}));
  EXPECT_EQ(DescribeUnixAccount(*with_group), "7:" + std::to_string(g->gr_gid) + " (" + group_name + ")");

  auto unknown = ResolveUnixAccount({.username = "ada", .unix_user = "ringt-nobody-has-this-name"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("--unix-user"), std::string::npos);
  auto unknown_group = ResolveUnixAccount({.username = "ada", .uid = 7, .unix_group = "ringt-no-such-group"});
  ASSERT_FALSE(unknown_group.ok());
  EXPECT_NE(unknown_group.status().message().find("--unix-group"), std::string::npos);

  auto both = ResolveUnixAccount({.username = "ada", .uid = 7, .gid = 7, .unix_user = name});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("not both"), std::string::npos);
}

TEST(UnixAccountTest, DescribesWhatTheMasterAnswers) {
  EXPECT_EQ(DescribeUnixAccount(nullptr), "-");
  EXPECT_EQ(DescribeUnixAccount({{"uid", 1001}, {"gid", 1002}, {"user", "ada"}, {"group", "ml"}}),
            "ada 1001:1002 (ml)");
}

}  // namespace
}  // namespace ring::cli
