// The agent's TLS settings: --ca-file checked and made absolute, wss:// URLs,
// and trials handed the agent's CA file as RING_CA_FILE.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "agent/agent_config.h"
#include "agent/trial_environment.h"
#include "tests/support/test_certs.h"

namespace ring {
namespace {

namespace fs = std::filesystem;

proto::Start CpuStart() {
  proto::Start s;
  s.allocation_id = "4.0";
  s.allocation_token = "tok";
  s.slot_type = "cpu";
  return s;
}

TEST(AgentTlsTest, TrialsGetTheAgentsCaFile) {
  AgentIdentity agent{"host-1", "10.0.0.7", "/etc/ring/ca.pem"};
  Environment env =
      BuildTrialEnvironment(CpuStart(), "https://m:8443", agent, {}, {{"RING_CA_FILE", "/old"}});
  EXPECT_EQ(env["RING_MASTER_URL"], "https://m:8443");
  EXPECT_EQ(env["RING_CA_FILE"], "/etc/ring/ca.pem");

  // The agent's wins over the experiment's environment.variables.
  auto start = CpuStart();
  start.environment = {{"RING_CA_FILE", "/mine"}};
  EXPECT_EQ(BuildTrialEnvironment(start, "https://m:8443", agent, {}, {})["RING_CA_FILE"],
            "/etc/ring/ca.pem");

  // An agent without one leaves RING_CA_FILE as it is, and sets none.
  AgentIdentity plain{"host-1", "10.0.0.7", ""};
  EXPECT_EQ(BuildTrialEnvironment(start, "https://m:8443", plain, {}, {})["RING_CA_FILE"], "/mine");
  EXPECT_EQ(BuildTrialEnvironment(CpuStart(), "http://m:8080", plain, {}, {}).count("RING_CA_FILE"), 0u);
}

class AgentTlsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ring-agent-tls-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    config_.id = "a1";
    config_.work_dir = dir_ + "/work";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
  AgentConfig config_;
};

TEST_F(AgentTlsConfigTest, TheCaFileIsCheckedAndMadeAbsolute) {
  auto files = testing::MakeTestTlsFiles(dir_);
  config_.master_url = "wss://127.0.0.1:8443";
  config_.ca_file = fs::relative(files.ca_cert).string();
  ASSERT_NE(config_.ca_file, files.ca_cert);  // relative, to see it made absolute
  Status s = ResolveAgentConfig(config_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(config_.master_url, "https://127.0.0.1:8443");
  EXPECT_EQ(fs::path(config_.ca_file), fs::path(files.ca_cert).lexically_normal());
}

TEST_F(AgentTlsConfigTest, AnUnreadableCaFileIsRefusedByName) {
  config_.master_url = "https://127.0.0.1:8443";
  config_.ca_file = dir_ + "/missing.pem";
  Status s = ResolveAgentConfig(config_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--ca-file"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(dir_ + "/missing.pem cannot be read"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ring
