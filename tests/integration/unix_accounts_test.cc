// Linking users to Unix accounts and changing passwords, against a real
// master, agent and `ring` CLI: only admins link (a user who links themself
// to root or to another user's uid is refused and nothing changes), a user
// changing their own password must give the current one, and `ring agent
// list` says in which mode each agent runs tasks.
#include <gtest/gtest.h>
#include <pwd.h>

#include <string>

#include "tests/support/test_cluster.h"

namespace ring::testing::unix_accounts {
namespace {

class UnixAccountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    ada_token_ = cluster_.CreateUser("ada", "ada-password");
    bob_token_ = cluster_.CreateUser("bob", "bob-password");
    ASSERT_FALSE(ada_token_.empty());
    ASSERT_FALSE(bob_token_.empty());
    ada_id_ = UserId("ada");
    bob_id_ = UserId("bob");
  }

  int64_t UserId(const std::string& name) {
    const nlohmann::json users = cluster_.GetJson("/api/v1/users");
    for (const auto& u : users["users"])
      if (u["username"] == name) return u["id"].get<int64_t>();
    return 0;
  }

  // PATCH /api/v1/users/{id} with `token`: the status and the answer.
  std::pair<int, nlohmann::json> Patch(const std::string& token, int64_t id, const nlohmann::json& body) {
    auto http = cluster_.NewClient();
    http->SetBearerToken(token);
    auto res = http->Request("PATCH", "/api/v1/users/" + std::to_string(id), body.dump());
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    if (!res.ok()) return {0, nullptr};
    return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
  }

  nlohmann::json UnixOf(int64_t id) {
    return cluster_.GetJson("/api/v1/users/" + std::to_string(id))["unix"];
  }

  TestCluster cluster_;
  std::string ada_token_;
  std::string bob_token_;
  int64_t ada_id_ = 0;
  int64_t bob_id_ = 0;
};

TEST_F(UnixAccountsTest, AUserCannotLinkThemselfToRootOrToAnotherUsersAccount) {
  // The admin links bob to his account.
  auto [linked, bob] = Patch(cluster_.admin_token(), bob_id_, {{"unix", {{"uid", 4242}, {"gid", 4243}}}});
  ASSERT_EQ(linked, 200) << bob.dump();
  EXPECT_EQ(bob["unix"], (nlohmann::json{{"uid", 4242}, {"gid", 4243}, {"user", ""}, {"group", ""}}));

  // Ada tries root, then bob's uid, then to unlink bob: 403 naming unix each time.
  for (const nlohmann::json& unix :
       {nlohmann::json{{"uid", 0}, {"gid", 0}}, nlohmann::json{{"uid", 4242}, {"gid", 4243}}}) {
    auto [status, answer] = Patch(ada_token_, ada_id_, {{"unix", unix}});
    EXPECT_EQ(status, 403) << answer.dump();
    EXPECT_NE(answer.dump().find("unix"), std::string::npos) << answer.dump();
  }
  auto [other, answer] = Patch(ada_token_, bob_id_, {{"unix", nullptr}});
  EXPECT_EQ(other, 403) << answer.dump();
  EXPECT_TRUE(UnixOf(ada_id_).is_null());
  EXPECT_EQ(UnixOf(bob_id_)["uid"], 4242);

  // Even an admin cannot make tasks run as root; the field is named.
  auto [root, refused] = Patch(cluster_.admin_token(), ada_id_, {{"unix", {{"uid", 0}, {"gid", 0}}}});
  EXPECT_EQ(root, 400) << refused.dump();
  EXPECT_NE(refused.dump().find("unix.uid"), std::string::npos) << refused.dump();
  auto [name, bad_name] =
      Patch(cluster_.admin_token(), ada_id_, {{"unix", {{"uid", 5000}, {"gid", 5000}, {"user", "../x"}}}});
  EXPECT_EQ(name, 400) << bad_name.dump();
  EXPECT_NE(bad_name.dump().find("unix.user"), std::string::npos) << bad_name.dump();
  EXPECT_TRUE(UnixOf(ada_id_).is_null());
}

TEST_F(UnixAccountsTest, ChangingYourOwnPasswordTakesTheCurrentOne) {
  // With only ada's session (say, a token copied from her browser).
  auto [missing, why] = Patch(ada_token_, ada_id_, {{"password", "taken-over-pw"}});
  EXPECT_EQ(missing, 400) << why.dump();
  EXPECT_NE(why.dump().find("current_password"), std::string::npos) << why.dump();
  auto [wrong, why_wrong] =
      Patch(ada_token_, ada_id_, {{"password", "taken-over-pw"}, {"current_password", "a-guess"}});
  EXPECT_EQ(wrong, 403) << why_wrong.dump();
  EXPECT_NE(why_wrong.dump().find("current_password"), std::string::npos) << why_wrong.dump();
  EXPECT_TRUE(cluster_.SignIn("ada", "taken-over-pw").empty());
  EXPECT_FALSE(cluster_.SignIn("ada", "ada-password").empty());

  auto [changed, answer] =
      Patch(ada_token_, ada_id_, {{"password", "ada-new-password"}, {"current_password", "ada-password"}});
  EXPECT_EQ(changed, 200) << answer.dump();
  EXPECT_FALSE(cluster_.SignIn("ada", "ada-new-password").empty());

  // An admin resetting bob's password needs none of bob's.
  auto [reset, reset_answer] = Patch(cluster_.admin_token(), bob_id_, {{"password", "bob-reset-password"}});
  EXPECT_EQ(reset, 200) << reset_answer.dump();
  EXPECT_FALSE(cluster_.SignIn("bob", "bob-reset-password").empty());
}

TEST_F(UnixAccountsTest, TheCliLinksByNameOrNumberAndListsTheAccount) {
  // By name, resolved on this host: root's account is refused by the master.
  passwd* root = ::getpwuid(0);
  ASSERT_NE(root, nullptr);
  auto as_root = cluster_.Ring({"user", "link-unix", "ada", "--unix-user", root->pw_name});
  EXPECT_EQ(as_root.exit_code, 1);
  EXPECT_NE(as_root.err.find("unix.uid"), std::string::npos) << as_root.err;

  auto unknown = cluster_.Ring({"user", "link-unix", "ada", "--unix-user", "ringt-no-such-account"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("--unix-user"), std::string::npos) << unknown.err;
  auto no_gid = cluster_.Ring({"user", "link-unix", "ada", "--uid", "5001"});
  EXPECT_EQ(no_gid.exit_code, 1);
  EXPECT_NE(no_gid.err.find("--gid"), std::string::npos) << no_gid.err;

  auto by_number = cluster_.Ring({"user", "link-unix", "ada", "--uid", "5001", "--gid", "5002"});
  ASSERT_EQ(by_number.exit_code, 0) << by_number.err;
  EXPECT_NE(by_number.out.find("5001:5002"), std::string::npos) << by_number.out;
  EXPECT_EQ(UnixOf(ada_id_), (nlohmann::json{{"uid", 5001}, {"gid", 5002}, {"user", ""}, {"group", ""}}));

  passwd* nobody = ::getpwnam("nobody");
  if (nobody != nullptr) {
    auto by_name = cluster_.Ring({"user", "link-unix", "bob", "--unix-user", "nobody"});
    ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
    EXPECT_EQ(UnixOf(bob_id_)["uid"], static_cast<int64_t>(nobody->pw_uid));
    EXPECT_EQ(UnixOf(bob_id_)["gid"], static_cast<int64_t>(nobody->pw_gid));
    EXPECT_EQ(UnixOf(bob_id_)["user"], "nobody");
  }

  auto list = cluster_.Ring({"user", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("UNIX ACCOUNT"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("5001:5002"), std::string::npos) << list.out;

  // A user who is not an admin cannot link anyone through the CLI either.
  auto as_ada = RunCommand(
      {BinDir() + "/ring", "-m", cluster_.url(), "user", "link-unix", "ada", "--uid", "7", "--gid", "7"},
      {{"RING_TOKEN", ada_token_}, {"XDG_CONFIG_HOME", cluster_.dir() + "/ada"}});
  EXPECT_NE(as_ada.exit_code, 0);
  EXPECT_EQ(UnixOf(ada_id_)["uid"], 5001);

  auto unlinked = cluster_.Ring({"user", "unlink-unix", "ada"});
  ASSERT_EQ(unlinked.exit_code, 0) << unlinked.err;
  EXPECT_TRUE(UnixOf(ada_id_).is_null());
}

TEST_F(UnixAccountsTest, AgentListShowsEachAgentsMode) {
  cluster_.StartAgent("agent-1", 1);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_.GetJson("/api/v1/agents")["total"] == 1; },
                                   std::chrono::seconds(20)));
  const auto agent = cluster_.GetJson("/api/v1/agents")["agents"][0];
  ASSERT_TRUE(agent["runs_as_owner"].is_boolean()) << agent.dump();
  const bool as_owner = agent["runs_as_owner"].get<bool>();
  auto list = cluster_.Ring({"agent", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("MODE"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find(as_owner ? "as owner" : "single-user"), std::string::npos) << list.out;
}

}  // namespace
}  // namespace ring::testing::unix_accounts
