// The submit helper's rules (slurm_submit/): what it accepts from its
// caller and which settings files it trusts. Its runs against a real Slurm
// are in tests/e2e/slurm_identity_e2e_test.cc.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "slurm_submit/submit_config.h"
#include "slurm_submit/submit_rules.h"

namespace ring::submit::testing {
namespace {

namespace fs = std::filesystem;

TEST(SlurmSubmitRules, TheCallerChoosesNeitherScriptNorAccountNorOutput) {
  EXPECT_TRUE(
      CheckSbatchOptions({"--partition=p", "--nodes=2", "--nodelist=n1,n2", "--time=60", "--exclusive"})
          .ok());
  for (const char* refused : {"--wrap=id", "--uid=0", "--export=ALL,LD_PRELOAD=/x.so", "--chdir=/root",
                              "--output=/etc/x", "--job-name=x", "--get-user-env", "--container=/x"}) {
    const Status s = CheckSbatchOptions({"--partition=p", refused});
    EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied) << refused << ": " << s.message();
  }
  EXPECT_EQ(CheckSbatchOptions({"-N2"}).code(), ErrorCode::kInvalidArgument) << "short options are refused";
  EXPECT_EQ(CheckSbatchOptions({"/tmp/evil.sh"}).code(), ErrorCode::kInvalidArgument)
      << "no script of its own";
  EXPECT_EQ(NodelistOf({"--nodes=2", "--nodelist=n1,n2"}), "n1,n2");

  EXPECT_TRUE(CheckAllocationId("12.0").ok());
  for (const char* bad : {"", "../x", ".hidden", "a/b", "x y"})
    EXPECT_FALSE(CheckAllocationId(bad).ok()) << bad;

  EXPECT_FALSE(CheckAccount(0, 1000).ok()) << "never root";
  EXPECT_FALSE(CheckAccount(999, 1000).ok()) << "never a system account";
  EXPECT_TRUE(CheckAccount(1001, 1000).ok());
  EXPECT_TRUE(CheckContainerRuntime("").ok());
  EXPECT_TRUE(CheckContainerRuntime("podman").ok());
  EXPECT_FALSE(CheckContainerRuntime("/tmp/evil").ok());
  EXPECT_TRUE(CheckSignal("TERM").ok());
  EXPECT_FALSE(CheckSignal("TERM;rm").ok());
}

TEST(SlurmSubmitRules, TheMastersGrantMustMatchTheRequest) {
  auto grant =
      ParseGrant(R"({"allocation_id":"3.0","pool":"hpc","nodes":["n1","n2"],"uid":1500,"gid":1500})");
  ASSERT_TRUE(grant.ok());
  EXPECT_TRUE(CheckGrant(*grant, 1500, 1500, "n1,n2").ok());
  EXPECT_EQ(CheckGrant(*grant, 1600, 1500, "n1,n2").code(), ErrorCode::kPermissionDenied) << "another owner";
  EXPECT_EQ(CheckGrant(*grant, 1500, 0, "n1,n2").code(), ErrorCode::kPermissionDenied) << "another group";
  EXPECT_EQ(CheckGrant(*grant, 1500, 1500, "n1").code(), ErrorCode::kPermissionDenied) << "other nodes";
  auto unlinked = ParseGrant(R"({"allocation_id":"3.0","pool":"hpc","nodes":["n1"]})");
  ASSERT_TRUE(unlinked.ok());
  EXPECT_EQ(CheckGrant(*unlinked, 1500, 1500, "n1").code(), ErrorCode::kPermissionDenied);
  EXPECT_FALSE(ParseGrant("not json").ok());
}

class SubmitConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the settings file must be root's";
    char tmpl[] = "/tmp/ring-submit-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directory(dir_ + "/jobs");
    ::chmod((dir_ + "/jobs").c_str(), 0711);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string Write(const std::string& text) {
    const std::string path = dir_ + "/submit.yaml";
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0644);
    return path;
  }
  std::string Settings() const {
    return "master_user: ringmaster\nmaster_url: http://127.0.0.1:8080\nagent_binary: /opt/ring/ringagent\n"
           "job_dir: " +
           dir_ + "/jobs\n";
  }
  std::string dir_;
};

TEST_F(SubmitConfigTest, OnlyASettingsFileRootAloneCanChangeIsRead) {
  const std::string path = Write(Settings());
  auto config = LoadSubmitConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->min_uid, 1000);
  EXPECT_EQ(config->agent_master_url, "http://127.0.0.1:8080");

  // Another account could rewrite it: refused, whoever calls.
  ::chmod(path.c_str(), 0666);
  EXPECT_EQ(LoadSubmitConfig(path).status().code(), ErrorCode::kPermissionDenied);
  ::chmod(path.c_str(), 0644);
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  EXPECT_EQ(LoadSubmitConfig(path).status().code(), ErrorCode::kPermissionDenied);
  ASSERT_EQ(::chown(path.c_str(), 0, 0), 0);
  // A folder above it another account may write.
  ::chmod(dir_.c_str(), 0777);
  EXPECT_EQ(LoadSubmitConfig(path).status().code(), ErrorCode::kPermissionDenied);
  ::chmod(dir_.c_str(), 0700);
  // A link to it.
  fs::create_symlink(path, dir_ + "/link.yaml");
  EXPECT_EQ(LoadSubmitConfig(dir_ + "/link.yaml").status().code(), ErrorCode::kPermissionDenied);
  // A job folder others may write: they could plant links in it.
  ::chmod((dir_ + "/jobs").c_str(), 0777);
  EXPECT_FALSE(LoadSubmitConfig(path).ok());
  ::chmod((dir_ + "/jobs").c_str(), 0711);
}

TEST_F(SubmitConfigTest, BadSettingsNameTheKeyAndLine) {
  auto unknown = LoadSubmitConfig(Write(Settings() + "agent_binry: /x\n"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find(":5: unknown key \"agent_binry\""), std::string::npos)
      << unknown.status().message();
  auto root = LoadSubmitConfig(Write(Settings() + "min_uid: 0\n"));
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("min_uid"), std::string::npos);
  auto missing = LoadSubmitConfig(Write("master_user: ringmaster\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("master_url is required"), std::string::npos)
      << missing.status().message();
}

}  // namespace
}  // namespace ring::submit::testing
