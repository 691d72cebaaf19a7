// The agent's state folder and token file: the credential is kept private
// and read back for its own id only; a token file or folder others may read
// is refused, naming the fix; the state folder defaults by user.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "agent/agent_config.h"
#include "agent/agent_state.h"

namespace ring {
namespace {

namespace fs = std::filesystem;

class AgentStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ring-agent-state-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path;
  }
  std::string dir_;
};

TEST_F(AgentStateTest, TheCredentialIsPrivateAndOnlyForItsId) {
  const std::string state = dir_ + "/state";
  ASSERT_TRUE(PrepareStateDir(state).ok());
  struct stat st {};
  ASSERT_EQ(stat(state.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_FALSE(LoadCredential(state, "a1")->has_value());

  ASSERT_TRUE(SaveCredential(state, "a1", "secret").ok());
  ASSERT_EQ(stat(CredentialPath(state).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(LoadCredential(state, "a1")->value(), "secret");
  EXPECT_FALSE(LoadCredential(state, "other")->has_value());  // enrolled under another id

  chmod(CredentialPath(state).c_str(), 0644);
  auto shared = LoadCredential(state, "a1");
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("chmod 600"), std::string::npos);

  chmod(state.c_str(), 0755);
  auto open_dir = PrepareStateDir(state);
  ASSERT_FALSE(open_dir.ok());
  EXPECT_NE(open_dir.message().find("chmod 700"), std::string::npos);
}

TEST_F(AgentStateTest, TheTokenFileMustBePrivate) {
  EXPECT_EQ(*ReadTokenFile(Write("token", "abc\n", 0600)), "abc");
  EXPECT_EQ(*ReadTokenFile(Write("ro", "abc", 0400)), "abc");
  auto readable = ReadTokenFile(Write("shared", "abc", 0640));
  ASSERT_FALSE(readable.ok());
  EXPECT_NE(readable.status().message().find("chmod 600"), std::string::npos);
  EXPECT_FALSE(ReadTokenFile(Write("empty", "\n", 0600)).ok());
  EXPECT_FALSE(ReadTokenFile(dir_ + "/missing").ok());

  AgentConfig c;
  c.master_url = "http://m:1";
  c.id = "n1";
  c.token_file = dir_ + "/shared";
  auto s = ResolveAgentConfig(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--token-file"), std::string::npos);
}

TEST_F(AgentStateTest, TheStateFolderDefaultsByUser) {
  AgentConfig c;
  c.master_url = "http://m:1";
  c.id = "n1";
  const char* xdg = std::getenv("XDG_STATE_HOME");
  const std::string saved = xdg ? xdg : "";
  setenv("XDG_STATE_HOME", dir_.c_str(), 1);
  ASSERT_TRUE(ResolveAgentConfig(c).ok());
  if (geteuid() == 0)
    EXPECT_EQ(c.state_dir, "/var/lib/ringagent/n1");
  else
    EXPECT_EQ(c.state_dir, dir_ + "/ringagent/n1");
  if (xdg)
    setenv("XDG_STATE_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_STATE_HOME");
  EXPECT_FALSE(fs::exists("/var/lib/ringagent/n1") && geteuid() != 0);  // resolving creates nothing

  AgentConfig given = c;
  given.state_dir = "rel/./state/";
  ASSERT_TRUE(ResolveAgentConfig(given).ok());
  EXPECT_EQ(given.state_dir, (fs::current_path() / "rel/state").string());
  EXPECT_FALSE(fs::exists(fs::current_path() / "rel"));
}

}  // namespace
}  // namespace ring
