// How an allocation's processes start: the precedence of resources.launch,
// the pool's default and the entrypoint rule, and the config key's parsing.
#include <gtest/gtest.h>

#include "common/experiment_config.h"
#include "common/launch_mode.h"

namespace ring {
namespace {

TEST(LaunchMode, TheEntrypointRuleFindsDeterminedLaunchModules) {
  EXPECT_EQ(LaunchModeForEntrypoint("python3 -m determined.launch.torch_distributed python3 train.py"),
            LaunchMode::kPerNode);
  EXPECT_EQ(LaunchModeForEntrypoint("python3 -m determined.launch.wrap_rank 0 python3 train.py"),
            LaunchMode::kPerNode);
  EXPECT_EQ(LaunchModeForEntrypoint("python3 -m determined.launch"), LaunchMode::kPerNode);
  EXPECT_EQ(LaunchModeForEntrypoint("python3 train.py"), LaunchMode::kPerSlot);
  EXPECT_EQ(LaunchModeForEntrypoint("python3 -m determined.launcher_tools"), LaunchMode::kPerSlot);
  EXPECT_EQ(LaunchModeForEntrypoint("python3 determined.launch.py"), LaunchMode::kPerSlot);  // not a -m
}

TEST(LaunchMode, ConfigThenPoolThenEntrypoint) {
  const std::string launcher = "python3 -m determined.launch.torch_distributed python3 train.py";
  EXPECT_EQ(ResolveLaunchMode(LaunchMode::kPerSlot, LaunchMode::kPerNode, launcher), LaunchMode::kPerSlot);
  EXPECT_EQ(ResolveLaunchMode(LaunchMode::kPerNode, LaunchMode::kPerSlot, "x"), LaunchMode::kPerNode);
  EXPECT_EQ(ResolveLaunchMode(LaunchMode::kAuto, LaunchMode::kPerNode, "python3 train.py"),
            LaunchMode::kPerNode);
  EXPECT_EQ(ResolveLaunchMode(LaunchMode::kAuto, LaunchMode::kPerSlot, launcher), LaunchMode::kPerSlot);
  EXPECT_EQ(ResolveLaunchMode(LaunchMode::kAuto, LaunchMode::kAuto, launcher), LaunchMode::kPerNode);
  EXPECT_EQ(ResolveLaunchMode(LaunchMode::kAuto, LaunchMode::kAuto, "python3 train.py"),
            LaunchMode::kPerSlot);
}

TEST(LaunchMode, ParsesBothSpellingsAndRefusesOthers) {
  EXPECT_EQ(ParseLaunchMode("per-node"), LaunchMode::kPerNode);
  EXPECT_EQ(ParseLaunchMode("per_slot"), LaunchMode::kPerSlot);
  EXPECT_EQ(ParseLaunchMode("auto"), LaunchMode::kAuto);
  EXPECT_FALSE(ParseLaunchMode("per_gpu"));
  EXPECT_EQ(ToString(LaunchMode::kPerNode), "per_node");
}

TEST(LaunchMode, ResourcesLaunchIsAConfigKey) {
  const std::string head = "name: x\nentrypoint: ./run\nsearcher:\n  name: single\n  metric: loss\n";
  auto config = ParseExperimentConfig(head + "resources:\n  launch: per_node\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->resources.launch, LaunchMode::kPerNode);
  EXPECT_EQ(ParseExperimentConfig(head)->resources.launch, LaunchMode::kAuto);
  auto bad = ParseExperimentConfig(head + "resources:\n  launch: per_gpu\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "experiment.yaml:7: resources.launch must be one of auto, per_slot, per_node, got \"per_gpu\"");
}

}  // namespace
}  // namespace ring
