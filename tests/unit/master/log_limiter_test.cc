// The master's per-allocation log limits: long lines are cut and say so,
// lines beyond the rate are dropped and one notice a second says how many.
#include <gtest/gtest.h>

#include "master/maintenance/log_limiter.h"

namespace ring {
namespace {

std::vector<LogRecord> Lines(int n, size_t length = 10, const std::string& allocation = "7.0") {
  std::vector<LogRecord> out;
  for (int i = 0; i < n; ++i) out.push_back({0, 7, allocation, 1, "stdout", std::string(length, 'x'), i});
  return out;
}

TEST(LogLimiterTest, LongLinesAreCutAndSaySo) {
  LogLimiter limiter({.lines_per_second = 100, .burst_lines = 100, .max_line_bytes = 100});
  auto out = limiter.Admit("7.0", Lines(2, 250), 0);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].line.substr(0, 100), std::string(100, 'x'));
  EXPECT_EQ(out[0].line.substr(100),
            " [cut: 150 more bytes; lines are limited to 100 bytes (max_log_line_bytes)]");
  EXPECT_EQ(limiter.Admit("7.0", Lines(1, 100), 0)[0].line, std::string(100, 'x'));  // at the limit: whole
}

TEST(LogLimiterTest, LinesBeyondTheRateAreDroppedWithOneNoticeASecond) {
  LogLimiter limiter({.lines_per_second = 10, .burst_lines = 50, .max_line_bytes = 1000});
  // A burst of 80 at once: 50 pass, 30 are dropped, and the log says so.
  auto out = limiter.Admit("7.0", Lines(80), 1000);
  ASSERT_EQ(out.size(), 51u);
  EXPECT_EQ(out.back().line,
            "[ringmaster] 30 log lines dropped: this allocation is over its limit of 10 lines per second "
            "(log_lines_per_second, bursts of 50)");
  EXPECT_EQ(out.back().allocation_id, "7.0");
  EXPECT_EQ(out.back().rank, 1);
  EXPECT_EQ(out.back().stream, "stderr");
  // 100 ms later one line's worth came back; the other drops wait for the next notice.
  out = limiter.Admit("7.0", Lines(5), 1100);
  EXPECT_EQ(out.size(), 1u);
  out = limiter.Admit("7.0", Lines(5), 1500);  // 4 tokens back, 1 dropped; still within the second
  EXPECT_EQ(out.size(), 4u);
  out = limiter.Admit("7.0", Lines(1), 2000);  // a second after the notice: the 5 drops are reported
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[1].line.find("[ringmaster] 5 log lines dropped"), std::string::npos) << out[1].line;
  // A steady 10 lines a second passes whole.
  for (int64_t t = 3000; t < 10000; t += 1000) EXPECT_EQ(limiter.Admit("7.0", Lines(10), t).size(), 10u) << t;
}

TEST(LogLimiterTest, EachAllocationHasItsOwnBucketAndForgetResetsIt) {
  LogLimiter limiter({.lines_per_second = 1, .burst_lines = 3, .max_line_bytes = 1000});
  EXPECT_EQ(limiter.Admit("1.0", Lines(3, 10, "1.0"), 0).size(), 3u);
  EXPECT_EQ(limiter.Admit("1.0", Lines(1, 10, "1.0"), 0).size(), 1u);  // only the notice
  EXPECT_EQ(limiter.Admit("2.0", Lines(3, 10, "2.0"), 0).size(), 3u);  // untouched by 1.0
  limiter.Forget("1.0");
  EXPECT_EQ(limiter.Admit("1.0", Lines(3, 10, "1.0"), 0).size(), 3u);
  EXPECT_TRUE(limiter.Admit("1.0", {}, 0).empty());
}

TEST(LogLimiterTest, BytesBeyondTheByteRateAreDroppedAndTheNoticeNamesThatLimit) {
  LogLimiter limiter({.lines_per_second = 1e6,
                      .burst_lines = 1e6,
                      .max_line_bytes = 10000,
                      .bytes_per_second = 1000,
                      .burst_bytes = 5000});
  // 100 lines of 1000 bytes (1001 with the newline): 4 fit in the burst.
  auto out = limiter.Admit("7.0", Lines(100, 1000), 1000);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out.back().line,
            "[ringmaster] 96 log lines dropped: this allocation is over its limit of 1000 bytes per second "
            "(log_bytes_per_second, bursts of 5000)");
  // Short lines still pass while their bytes fit; the bucket refills at the byte rate.
  out = limiter.Admit("7.0", Lines(10, 9), 1000);
  EXPECT_EQ(out.size(), 10u);
  out = limiter.Admit("7.0", Lines(10, 1000), 3100);  // about 2 lines' worth came back
  size_t admitted = 0;
  for (const auto& l : out) admitted += l.line.size() == 1000;
  EXPECT_EQ(admitted, 2u);
}

}  // namespace
}  // namespace ring
