// JSON log lines: one object per line with ts, level, logger and msg, quotes
// and control characters escaped, text that is not UTF-8 replaced.
#include "common/log_format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ring {
namespace {

TEST(LogFormatTest, AJsonLineIsOneObjectWithItsFields) {
  const std::string line =
      JsonLogLine("2026-11-24T13:01:02.345Z", "warning", "ringmaster", "say \"hi\"\n\tand \xff bye");
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // the message's newline is escaped
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["ts"], "2026-11-24T13:01:02.345Z");
  EXPECT_EQ(j["level"], "warning");
  EXPECT_EQ(j["logger"], "ringmaster");
  EXPECT_EQ(j["msg"], "say \"hi\"\n\tand \xEF\xBF\xBD bye");
  EXPECT_EQ(line.rfind("{\"ts\":", 0), 0u);  // fields in a fixed order
}

TEST(LogFormatTest, UnknownFormatsAreRefused) {
  EXPECT_EQ(UseLogFormat("t", "xml").code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(UseLogFormat("t", "json").ok());
  EXPECT_TRUE(UseLogFormat("t", "text").ok());
}

}  // namespace
}  // namespace ring
