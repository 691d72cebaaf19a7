// Users through the real `ring` CLI against a real master: sign in and out,
// whoami, creating users, changing passwords, deactivation, tokens that
// survive a master restart, and the admin a master makes at its first start.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <regex>
#include <sstream>
#include <thread>

#include "common/archive.h"
#include "master/store/migration.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::users_cli {
namespace {

namespace fs = std::filesystem;

class UsersCliTest : public ::testing::Test {
 protected:
  void SetUp() override { cluster_.StartMaster(); }

  // `ring` with its own config dir, as another person on another account.
  CommandResult RingAs(const std::string& config_dir, std::vector<std::string> args) {
    args.insert(args.begin(), {BinDir() + "/ring", "-m", cluster_.url()});
    return RunCommand(args, {{"XDG_CONFIG_HOME", cluster_.dir() + "/" + config_dir}});
  }

  TestCluster cluster_;
};

TEST_F(UsersCliTest, AdminCreatesAUserWhoSignsInWorksAndIsLimited) {
  // TestCluster signs the CLI in with `ring user login`: a 0600 token file.
  cluster_.SignInCli();
  const std::string tokens = cluster_.dir() + "/config/ring/tokens.json";
  ASSERT_TRUE(fs::exists(tokens));
  struct stat st {};
  ASSERT_EQ(::stat(tokens.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(ReadFileText(tokens).find(cluster_.admin_password()), std::string::npos);

  auto info = cluster_.Ring({"master", "info"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_TRUE(std::regex_search(info.out, std::regex("schema version [0-9]+"))) << info.out;
  EXPECT_NE(info.out.find("experiments: 0, agents: 0, users: 1"), std::string::npos) << info.out;

  // An online backup while another client keeps creating experiments.
  auto model = PackDirectory(cluster_.MakeModelDir("tiny", {{"run.sh", "exit 0\n"}}));
  ASSERT_TRUE(model.ok());
  const std::string body = nlohmann::json{
      {"config",
       "name: tiny\nentrypoint: sh run.sh\nsearcher:\n  name: single\n"
       "  metric: loss\n  max_length:\n    batches: 1\n"},
      {"model_definition", Base64Encode(*model)},
      {"activate", false}}.dump();
  std::atomic<bool> writing{true};
  std::atomic<int> submitted{0};
  std::thread writer([&] {
    auto http = cluster_.NewClient();
    http->SetBearerToken(cluster_.admin_token());
    while (writing) {
      auto res = http->Post("/api/v1/experiments", body);
      if (res.ok() && res->status == 201) ++submitted;
    }
  });
  const bool writes = TestCluster::WaitFor([&] { return submitted >= 5; }, std::chrono::seconds(20));
  const std::string backup = cluster_.dir() + "/backup.db";
  auto backed = cluster_.Ring({"master", "backup", backup});
  writing = false;
  writer.join();
  ASSERT_TRUE(writes) << "the writer could not create experiments";
  ASSERT_EQ(backed.exit_code, 0) << backed.err;
  EXPECT_NE(backed.out.find("integrity ok"), std::string::npos) << backed.out;
  auto counted = RunCommand({"sqlite3", backup, "SELECT count(*) FROM experiments;"});
  ASSERT_EQ(counted.exit_code, 0) << counted.err;
  EXPECT_GE(std::stoi(counted.out), 5);
  EXPECT_LE(std::stoi(counted.out), submitted.load());
  auto copy =
      RunCommand({"sqlite3", backup, "PRAGMA integrity_check; SELECT username FROM users WHERE id = 1;"});
  EXPECT_EQ(copy.out, "ok\nadmin\n") << copy.err;
  auto twice = cluster_.Ring({"master", "backup", backup});
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_NE(twice.err.find("exists"), std::string::npos) << twice.err;

  auto whoami = cluster_.Ring({"user", "whoami"});
  ASSERT_EQ(whoami.exit_code, 0) << whoami.err;
  EXPECT_NE(whoami.out.find("admin (admin)"), std::string::npos) << whoami.out;

  const std::string ada_pw = cluster_.WriteFile("ada-pw", "ada-first-password\n");
  auto created = cluster_.Ring({"user", "create", "ada", "--password-file", ada_pw});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_NE(created.out.find("Created user ada (user)"), std::string::npos) << created.out;
  auto again = cluster_.Ring({"user", "create", "ada", "--password-file", ada_pw});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("exists"), std::string::npos) << again.err;
  auto list = cluster_.Ring({"user", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("ada"), std::string::npos) << list.out;

  // Ada, on her own account.
  const std::string wrong = cluster_.WriteFile("wrong-pw", "not-her-password\n");
  auto refused = RingAs("ada", {"user", "login", "ada", "--password-file", wrong});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("wrong username or password"), std::string::npos) << refused.err;
  auto not_signed_in = RingAs("ada", {"experiment", "list"});
  EXPECT_EQ(not_signed_in.exit_code, 1);
  EXPECT_NE(not_signed_in.err.find("ring user login"), std::string::npos) << not_signed_in.err;

  auto login = RingAs("ada", {"user", "login", "ada", "--password-file", ada_pw});
  ASSERT_EQ(login.exit_code, 0) << login.err;
  EXPECT_NE(login.out.find("Signed in to " + cluster_.url() + " as ada (user)"), std::string::npos)
      << login.out;
  EXPECT_EQ(RingAs("ada", {"experiment", "list"}).exit_code, 0);
  auto ada_who = RingAs("ada", {"user", "whoami"});
  EXPECT_NE(ada_who.out.find("ada (user)"), std::string::npos) << ada_who.out;
  auto not_admin = RingAs("ada", {"user", "create", "eve", "--password-file", ada_pw});
  EXPECT_EQ(not_admin.exit_code, 1);
  EXPECT_NE(not_admin.err.find("for admins"), std::string::npos) << not_admin.err;
  auto no_list = RingAs("ada", {"user", "list"});
  EXPECT_EQ(no_list.exit_code, 1);

  // Her session outlives a master restart (sessions are rows in SQLite).
  cluster_.StopMaster();
  cluster_.StartMaster();
  EXPECT_EQ(RingAs("ada", {"user", "whoami"}).exit_code, 0);

  // She changes her password: the CLI signs in again with the new one.
  const std::string new_pw = cluster_.WriteFile("ada-new-pw", "ada-second-password\n");
  // Her own password takes her current one: a wrong one changes nothing.
  auto guessed = RingAs(
      "ada", {"user", "change-password", "--password-file", new_pw, "--current-password-file", new_pw});
  EXPECT_EQ(guessed.exit_code, 1);
  EXPECT_NE(guessed.err.find("current_password"), std::string::npos) << guessed.err;
  EXPECT_EQ(RingAs("ada", {"user", "whoami"}).exit_code, 0);
  auto changed = RingAs(
      "ada", {"user", "change-password", "--password-file", new_pw, "--current-password-file", ada_pw});
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_EQ(RingAs("ada", {"user", "whoami"}).exit_code, 0);
  EXPECT_EQ(RingAs("ada-old", {"user", "login", "ada", "--password-file", ada_pw}).exit_code, 1);
  EXPECT_EQ(RingAs("ada-new", {"user", "login", "ada", "--password-file", new_pw}).exit_code, 0);

  // Deactivated, she is out at once and cannot sign in.
  ASSERT_EQ(cluster_.Ring({"user", "deactivate", "ada"}).exit_code, 0);
  auto out = RingAs("ada", {"user", "whoami"});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_NE(out.err.find("sign in again"), std::string::npos) << out.err;
  EXPECT_EQ(RingAs("ada-again", {"user", "login", "ada", "--password-file", new_pw}).exit_code, 1);
  ASSERT_EQ(cluster_.Ring({"user", "activate", "ada"}).exit_code, 0);
  EXPECT_EQ(RingAs("ada-again", {"user", "login", "ada", "--password-file", new_pw}).exit_code, 0);

  // Signing out ends the token on the master and forgets it here.
  auto logout = cluster_.Ring({"user", "logout"});
  ASSERT_EQ(logout.exit_code, 0) << logout.err;
  EXPECT_EQ(ReadFileText(tokens).find(cluster_.url()), std::string::npos);
  auto gone = cluster_.Ring({"user", "whoami"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("sign in"), std::string::npos) << gone.err;
  int status = 0;
  cluster_.GetJson("/api/v1/users/me", &status);
  EXPECT_EQ(status, 200);  // the test's own client has its own session
}

TEST(UsersFirstStart, AMasterWithoutAPasswordFileLogsARandomAdminPasswordOnce) {
  const std::string dir = ::testing::TempDir() + "/ring-first-start-" + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto start = [&](const std::string& log) {
    ChildProcess master({BinDir() + "/ringmaster", "--listen", "127.0.0.1:0", "--data-dir", dir + "/data",
                         "--port-file", dir + "/port"},
                        {}, dir + "/" + log);
    EXPECT_TRUE(TestCluster::WaitFor(
        [&] { return fs::exists(dir + "/port") && !ReadFileText(dir + "/port").empty(); },
        std::chrono::seconds(20)));
    return master;
  };
  std::string password;
  {
    ChildProcess master = start("first.log");
    const std::string log = ReadFileText(dir + "/first.log");
    std::smatch m;
    ASSERT_TRUE(
        std::regex_search(log, m, std::regex("created the user admin with the password ([A-Za-z0-9]+)")))
        << log;
    password = m[1];
    auto url = Url::Parse("http://127.0.0.1:" + std::to_string(std::stoi(ReadFileText(dir + "/port"))));
    ASSERT_TRUE(url.ok());
    auto answers = std::make_shared<ApiAnswerLog>();
    CheckedHttpClient http(*url, answers);
    auto res =
        http.Post("/api/v1/auth/login", nlohmann::json{{"username", "admin"}, {"password", password}}.dump());
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(res->status, 200) << res->body;
    Status checked = answers->CheckAndClear(dir + "/api-answers.jsonl");
    EXPECT_TRUE(checked.ok()) << checked.message();
    master.Stop();
  }
  fs::remove(dir + "/port");
  {
    ChildProcess master = start("second.log");
    master.Stop();
    const std::string log = ReadFileText(dir + "/second.log");
    EXPECT_EQ(log.find(password), std::string::npos) << "printed twice: " << log;
  }
  fs::remove_all(dir);
}

TEST(LogFormat, AMasterWithJsonLogsWritesOneObjectPerLine) {
  TestCluster cluster;
  TestCluster::MasterOptions options;
  options.extra_args = {"--log-format", "json"};
  cluster.StartMaster(options);
  ASSERT_EQ(cluster.Ring({"user", "whoami"}).exit_code, 0);
  cluster.StopMaster();
  std::istringstream lines(ReadFileText(cluster.dir() + "/master.log"));
  std::string line;
  int parsed = 0;
  bool saw_sign_in = false;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << "not a JSON object: " << line;
    EXPECT_TRUE(j.contains("ts") && j.contains("level") && j.contains("msg")) << line;
    EXPECT_EQ(j["logger"], "ringmaster");
    saw_sign_in = saw_sign_in || j["msg"].get<std::string>().find("admin signed in") != std::string::npos;
    ++parsed;
  }
  EXPECT_GT(parsed, 3);
  EXPECT_TRUE(saw_sign_in);
}

}  // namespace
}  // namespace ring::testing::users_cli
