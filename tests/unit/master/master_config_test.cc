// master.yaml: the shipped file loads, pools parse, and mistakes name the key and line.
#include "master/master_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ring {
namespace {

class MasterConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() / ("master-" + std::to_string(::getpid()) + ".yaml"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  Result<MasterConfig> Load(const std::string& text) {
    std::ofstream(path_) << text;
    return MasterConfig::FromYamlFile(path_);
  }
  std::string path_;
};

TEST_F(MasterConfigTest, TheShippedFileLoads) {
  auto c = MasterConfig::FromYamlFile(RING_SOURCE_DIR "/configs/master.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->reconnect_window_ms, 25000);
  ASSERT_EQ(c->resource_pools.size(), 1u);
  EXPECT_EQ(c->resource_pools[0].name, "default");
}

TEST_F(MasterConfigTest, PoolsParseWithTheirPolicies) {
  auto c = Load(
      "resource_pools:\n  - name: gpu\n    description: A100s\n    scheduler:\n      type: fair_share\n"
      "      preemption: false\n      fitting_policy: worst\n  - name: cpu\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->resource_pools.size(), 2u);
  EXPECT_EQ(c->resource_pools[0].scheduler, "fair_share");
  EXPECT_FALSE(c->resource_pools[0].preemption);
  EXPECT_EQ(c->resource_pools[0].fitting_policy, "worst");
  EXPECT_EQ(c->resource_pools[1].scheduler, "priority");
  EXPECT_TRUE(c->resource_pools[1].preemption);
  EXPECT_EQ(MasterConfig{}.resource_pools.size(), 1u);  // without the key: "default"
  EXPECT_EQ(c->resource_pools[0].launch, LaunchMode::kAuto);
  auto l = Load("resource_pools:\n  - name: gpu\n    launch: per_node\n");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->resource_pools[0].launch, LaunchMode::kPerNode);
}

TEST_F(MasterConfigTest, APoolMayRequireAContainerRuntime) {
  auto c = Load("resource_pools:\n  - name: gpu\n    container_runtime: podman\n  - name: cpu\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->resource_pools[0].container_runtime, "podman");
  EXPECT_EQ(c->resource_pools[1].container_runtime, "");  // any runtime its agents have
  auto bad = Load("resource_pools:\n  - name: gpu\n    container_runtime: lxc\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(":3: resource_pools[0].container_runtime must be one of podman"),
            std::string::npos)
      << bad.status().message();
}

TEST_F(MasterConfigTest, CheckpointStorageAndDownloadSettings) {
  auto c = Load(
      "checkpoint_storage:\n  allowed_roots: [/mnt/a, /mnt/b]\nexperiments_team_readable: false\n"
      "max_streamed_answers: 2\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->checkpoint_allowed_roots, (std::vector<std::string>{"/mnt/a", "/mnt/b"}));
  EXPECT_FALSE(c->experiments_team_readable);
  EXPECT_EQ(c->max_streamed_answers, 2);
  EXPECT_TRUE(MasterConfig{}.experiments_team_readable) << "team-readable by default, as in Determined";
}

TEST_F(MasterConfigTest, MistakesNameTheKeyAndLine) {
  struct Case {
    std::string yaml, expected;
  };
  for (const auto& [yaml, expected] : std::vector<Case>{
           {"resource_pools:\n  - name: a\n  - name: a\n", ":3: resource_pools[1].name \"a\" is taken"},
           {"resource_pools:\n  - name: a\n    scheduler: {type: fifo}\n",
            "scheduler.type must be priority or fair_share"},
           {"resource_pools:\n  - name: a\n    scheduler: {fitting_policy: tight}\n",
            "must be best or worst"},
           {"resource_pools:\n  - description: x\n", "resource_pools[0].name is required"},
           {"resource_pools:\n  - name: a\n    colour: red\n", "unknown key \"resource_pools[0].colour\""},
           {"resource_pools: []\n", "resource_pools must be a non-empty list"},
           {"resource_pools:\n  - name: a\n    launch: per_gpu\n",
            ":3: resource_pools[0].launch must be one of auto, per_slot, per_node, got \"per_gpu\""},
           {"reconnect_window_ms: soon\n", "reconnect_window_ms has the wrong type"},
           {"checkpoint_storage:\n  allowed_roots: [relative]\n",
            ":2: checkpoint_storage.allowed_roots must hold absolute folders, got \"relative\""},
           {"checkpoint_storage:\n  allowed_roots: [/a/../etc]\n", "must not contain \"..\""},
           {"checkpoint_storage:\n  roots: [/a]\n", "unknown key \"checkpoint_storage.roots\""},
       }) {
    auto c = Load(yaml);
    ASSERT_FALSE(c.ok()) << yaml;
    EXPECT_NE(c.status().message().find(expected), std::string::npos) << c.status().message();
  }
}

}  // namespace
}  // namespace ring
