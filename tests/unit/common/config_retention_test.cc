// A retention change written into a stored config: the save_* counts into
// checkpoint_storage (kept partial, so the master's storage still applies),
// log_retention_days where the config says it, or removed for the master's.
#include <gtest/gtest.h>

#include "common/config_retention.h"
#include "common/experiment_config.h"

namespace ring {
namespace {

constexpr char kBase[] = "name: x\nentrypoint: sh run.sh\nsearcher: {name: single, metric: loss}\n";

TEST(ConfigRetention, CountsGoIntoAPartialCheckpointStorage) {
  RetentionPatch patch;
  patch.save_trial_latest = 1;
  patch.save_experiment_best = 0;
  auto text = WithRetention(kBase, patch);
  ASSERT_TRUE(text.ok());
  auto config = ParseExperimentConfig(*text);
  ASSERT_TRUE(config.ok()) << config.status().ToString() << "\n" << *text;
  ASSERT_TRUE(config->checkpoint_storage.has_value());
  EXPECT_EQ(config->checkpoint_storage->save_trial_latest, 1);
  EXPECT_EQ(config->checkpoint_storage->save_experiment_best, 0);
  EXPECT_TRUE(config->checkpoint_storage->host_path.empty()) << "still the master's storage";
}

TEST(ConfigRetention, LogDaysGoWhereTheConfigSaysThemOrAway) {
  RetentionPatch patch;
  patch.log_retention_days = std::optional<int64_t>(3);
  auto nested = WithRetention(kBase, patch);
  ASSERT_TRUE(nested.ok());
  EXPECT_NE(nested->find("retention_policy:\n  log_retention_days: 3"), std::string::npos) << *nested;
  auto top = WithRetention(std::string(kBase) + "log_retention_days: 9\n", patch);
  ASSERT_TRUE(top.ok());
  auto config = ParseExperimentConfig(*top);
  ASSERT_TRUE(config.ok()) << config.status().ToString() << "\n" << *top;
  EXPECT_EQ(config->log_retention_days, 3);

  patch.log_retention_days = std::optional<int64_t>();  // the master's setting
  auto cleared = WithRetention(*nested, patch);
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(cleared->find("retention"), std::string::npos) << *cleared;
  config = ParseExperimentConfig(*cleared);
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->log_retention_days.has_value());
}

TEST(ConfigRetention, RefusesATextThatIsNoMap) {
  EXPECT_EQ(WithRetention("- a\n", RetentionPatch{}).status().code(), ErrorCode::kInvalidConfig);
}

}  // namespace
}  // namespace ring
