// A TASK_LOG trigger fires at most once a minute per (webhook, trial,
// trigger), and the limiter's memory is bounded.
#include <gtest/gtest.h>

#include "master/notifications/log_trigger_limiter.h"

namespace ring {
namespace {

using std::chrono::seconds;

TEST(LogTriggerLimiter, OncePerMinutePerWebhookTrialAndTrigger) {
  LogTriggerLimiter limiter;
  const LogTriggerLimiter::Time t0{};
  EXPECT_TRUE(limiter.Admit(1, 7, 0, t0));
  EXPECT_FALSE(limiter.Admit(1, 7, 0, t0 + seconds(1)));
  EXPECT_FALSE(limiter.Admit(1, 7, 0, t0 + seconds(59)));
  EXPECT_TRUE(limiter.Admit(1, 7, 1, t0 + seconds(1))) << "another trigger";
  EXPECT_TRUE(limiter.Admit(1, 8, 0, t0 + seconds(1))) << "another trial";
  EXPECT_TRUE(limiter.Admit(2, 7, 0, t0 + seconds(1))) << "another webhook";
  EXPECT_TRUE(limiter.Admit(1, 7, 0, t0 + seconds(60)));
  EXPECT_FALSE(limiter.Admit(1, 7, 0, t0 + seconds(61)));
}

TEST(LogTriggerLimiter, ForgetsStaleEntriesAndRefusesWhenFull) {
  LogTriggerLimiter limiter(std::chrono::minutes(1), 3);
  const LogTriggerLimiter::Time t0{};
  for (int trial = 0; trial < 3; ++trial) EXPECT_TRUE(limiter.Admit(1, trial, 0, t0));
  EXPECT_FALSE(limiter.Admit(1, 99, 0, t0 + seconds(10))) << "full of fresh entries";
  EXPECT_TRUE(limiter.Admit(1, 99, 0, t0 + seconds(61))) << "the stale ones went";
  EXPECT_EQ(limiter.size(), 1u);
}

}  // namespace
}  // namespace ring
