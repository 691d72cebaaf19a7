// Config templates: the experiment's config laid over the template's, maps
// merged key by key, anything else replaced; what is not a map refused.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include "common/config_template.h"

namespace ring {
namespace {

TEST(ConfigTemplate, TheExperimentsKeysWinAndMapsMerge) {
  const std::string tmpl = R"(max_restarts: 7
resources:
  slots_per_trial: 2
  resource_pool: gpus
hyperparameters:
  batch_size: 64
  optimizer: adam
labels: [from-template]
)";
  const std::string config = R"(name: mine
resources:
  slots_per_trial: 1
hyperparameters:
  batch_size: 32
labels: [mine]
)";
  auto merged = ApplyTemplate("base", tmpl, config);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  const YAML::Node m = YAML::Load(*merged);
  EXPECT_EQ(m["name"].as<std::string>(), "mine");
  EXPECT_EQ(m["max_restarts"].as<int>(), 7) << "a key only the template has";
  EXPECT_EQ(m["resources"]["slots_per_trial"].as<int>(), 1) << "the experiment's wins";
  EXPECT_EQ(m["resources"]["resource_pool"].as<std::string>(), "gpus") << "maps merge";
  EXPECT_EQ(m["hyperparameters"]["batch_size"].as<int>(), 32);
  EXPECT_EQ(m["hyperparameters"]["optimizer"].as<std::string>(), "adam");
  ASSERT_EQ(m["labels"].size(), 1u) << "a list is replaced whole";
  EXPECT_EQ(m["labels"][0].as<std::string>(), "mine");
  // An empty config is the template.
  auto only = ApplyTemplate("base", tmpl, "");
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(YAML::Load(*only)["max_restarts"].as<int>(), 7);
}

TEST(ConfigTemplate, WhatIsNotAMapIsRefusedNamingIt) {
  EXPECT_TRUE(CheckTemplateText("base", "max_restarts: 1\n").ok());
  Status list = CheckTemplateText("base", "- a\n- b\n");
  EXPECT_EQ(list.code(), ErrorCode::kInvalidConfig);
  EXPECT_NE(list.message().find("template base:1: a config must be a map"), std::string::npos)
      << list.message();
  Status broken = CheckTemplateText("base", "a: [1\n");
  EXPECT_NE(broken.message().find("template base:"), std::string::npos) << broken.message();
  EXPECT_NE(broken.message().find("invalid YAML"), std::string::npos) << broken.message();
  auto bad = ApplyTemplate("base", "a: 1\n", "just text");
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_NE(bad.status().message().find("experiment.yaml:1"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace ring
