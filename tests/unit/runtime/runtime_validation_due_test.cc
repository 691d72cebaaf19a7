// Context::validation_due() (min_validation_period): counted from the last
// validation report, recorded in checkpoints and taken back by a resumed run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/runtime/runtime_searcher_fixture.h"

namespace ring::trial {
namespace {

using namespace searcher_testing;
namespace fs = std::filesystem;

class ValidationDueTest : public RuntimeSearcherTest {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("runtime-validation-due-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  Context WithPeriod(const std::string& period, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--checkpoint-dir", root_.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return Local(args, {{"RING_MIN_VALIDATION_PERIOD_BATCHES", period}});
  }

  fs::path root_;
};

TEST_F(ValidationDueTest, NeverWithoutAPeriod) {
  auto ctx = Local({});
  EXPECT_FALSE(ctx.validation_due(0));
  EXPECT_FALSE(ctx.validation_due(1000000));
  auto zero = WithPeriod("0");
  EXPECT_FALSE(zero.validation_due(1000000));
  // Checkpoints then carry nothing extra.
  const auto uuid = zero.checkpoints().save(5, [](const fs::path&) {}, {{"note", "x"}});
  auto again = WithPeriod("0", {"--resume", (root_ / uuid).string()});
  EXPECT_EQ(again.checkpoints().latest_verified()->metadata, (nlohmann::json{{"note", "x"}}));
}

TEST_F(ValidationDueTest, CountsFromTheLastValidationReport) {
  auto ctx = WithPeriod("100");
  EXPECT_FALSE(ctx.validation_due(99));
  EXPECT_TRUE(ctx.validation_due(100)) << "from the start";
  ctx.report_training_metrics(150, {{"loss", 1.0}});  // training reports do not count
  EXPECT_TRUE(ctx.validation_due(150));
  ctx.report_validation_metrics(150, {{"validation_loss", 1.0}});
  EXPECT_FALSE(ctx.validation_due(249));
  EXPECT_TRUE(ctx.validation_due(250));
  ctx.report_validation_metrics(240, {{"validation_loss", NAN}});  // left out: no validation
  EXPECT_TRUE(ctx.validation_due(250));
  // A completion's own validation report counts too.
  auto op = ctx.searcher().next_operation();
  ASSERT_TRUE(op);
  ASSERT_EQ(op->length(), 100);
  op->report_completed(0.5);
  EXPECT_FALSE(ctx.validation_due(199));
  EXPECT_TRUE(ctx.validation_due(200));
  EXPECT_THROW(WithPeriod("-1"), ConfigError);
}

TEST_F(ValidationDueTest, AResumedRunCountsFromTheLastValidationBeforeItsCheckpoint) {
  std::string uuid;
  {
    auto ctx = WithPeriod("100");
    ctx.report_validation_metrics(150, {{"validation_loss", 1.0}});
    uuid = ctx.checkpoints().save(210, [](const fs::path& dir) { std::ofstream(dir / "state") << "s"; },
                                  {{"note", "x"}});
  }
  auto resumed = WithPeriod("100", {"--resume", (root_ / uuid).string()});
  const auto info = resumed.checkpoints().latest_verified();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->metadata, (nlohmann::json{{"note", "x"}, {"ring_last_validation_batches", 150}}));
  EXPECT_FALSE(resumed.validation_due(249)) << "as if it had not been interrupted";
  EXPECT_TRUE(resumed.validation_due(250));
}

}  // namespace
}  // namespace ring::trial
