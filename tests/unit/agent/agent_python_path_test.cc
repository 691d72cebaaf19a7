// The trial runtime's Python folder: found beside the agent's binary (build
// tree and installed prefix), and put first on every trial's PYTHONPATH,
// before the experiment's own, so an installed `determined` cannot shadow it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "agent/agent_config.h"
#include "agent/agent_config_file.h"
#include "agent/runtime_python_dir.h"
#include "agent/trial_environment.h"

namespace ring {
namespace {

namespace fs = std::filesystem;

class AgentPythonDir : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ring-python-dir-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "bin");
  }
  void TearDown() override { fs::remove_all(root_); }

  void Package(const fs::path& dir) {
    fs::create_directories(dir / "determined");
    std::ofstream(dir / "determined" / "__init__.py") << "";
  }

  fs::path root_;
};

TEST_F(AgentPythonDir, BuildTreeFolderBesideBin) {
  Package(root_ / "python");
  EXPECT_EQ(FindRuntimePythonDir(root_ / "bin" / "ringagent"), (root_ / "python").string());
}

TEST_F(AgentPythonDir, InstalledPrefixDistPackages) {
  Package(root_ / "lib" / "python3.11" / "dist-packages");
  fs::create_directories(root_ / "lib" / "python3.11" / "site-packages");  // without the package
  EXPECT_EQ(FindRuntimePythonDir(root_ / "bin" / "ringagent"),
            (root_ / "lib" / "python3.11" / "dist-packages").string());
}

TEST_F(AgentPythonDir, NothingFoundIsEmpty) {
  fs::create_directories(root_ / "python");  // a folder without the package does not count
  EXPECT_EQ(FindRuntimePythonDir(root_ / "bin" / "ringagent"), "");
}

TEST_F(AgentPythonDir, ConfigRefusesAFolderWithoutThePackageAndNamesTheFlag) {
  AgentConfig config;
  config.master_url = "http://127.0.0.1:8080";
  config.id = "a";
  config.state_dir = (root_ / "state").string();
  config.work_dir = (root_ / "work").string();
  config.python_dir = (root_ / "bin").string();
  Status s = ResolveAgentConfig(config);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--python-dir"), std::string::npos) << s.message();

  Package(root_ / "python");
  config.python_dir = (root_ / "python").string();
  EXPECT_TRUE(ResolveAgentConfig(config).ok());
  config.python_dir = "none";
  EXPECT_TRUE(ResolveAgentConfig(config).ok());
  EXPECT_EQ(config.python_dir, "");
}

TEST_F(AgentPythonDir, ConfigFileKeyPythonDir) {
  const fs::path file = root_ / "agent.yaml";
  std::ofstream(file) << "master: http://127.0.0.1:1\npython_dir: /opt/ring/python\n";
  AgentConfig config;
  std::string format = "text";
  ASSERT_TRUE(LoadAgentConfigFile(file.string(), config, format).ok());
  EXPECT_EQ(config.python_dir, "/opt/ring/python");
}

proto::Start Start() {
  proto::Start start;
  start.allocation_id = "1.0";
  start.trial_id = 1;
  start.world_size = 1;
  start.local_world_size = 1;
  return start;
}

TEST(AgentPythonPath, RuntimeFolderFirstThenTheExperimentsOwn) {
  proto::Start start = Start();
  start.environment["PYTHONPATH"] = "/my/libs:/more";
  AgentIdentity agent{"a", "127.0.0.1", "", "/opt/ring/python"};
  Environment env = BuildTrialEnvironment(start, "http://m:1", agent, {}, {{"PATH", "/bin"}});
  EXPECT_EQ(env["PYTHONPATH"], "/opt/ring/python:/my/libs:/more");
}

TEST(AgentPythonPath, RuntimeFolderAloneWhenTheExperimentSetsNone) {
  AgentIdentity agent{"a", "127.0.0.1", "", "/opt/ring/python"};
  EXPECT_EQ(BuildTrialEnvironment(Start(), "http://m:1", agent, {}, {})["PYTHONPATH"], "/opt/ring/python");
}

TEST(AgentPythonPath, LeftAloneWithoutARuntimeFolder) {
  proto::Start start = Start();
  start.environment["PYTHONPATH"] = "/my/libs";
  AgentIdentity agent{"a", "127.0.0.1", "", ""};
  EXPECT_EQ(BuildTrialEnvironment(start, "http://m:1", agent, {}, {})["PYTHONPATH"], "/my/libs");
  EXPECT_EQ(BuildTrialEnvironment(Start(), "http://m:1", agent, {}, {}).count("PYTHONPATH"), 0u);
}

}  // namespace
}  // namespace ring
