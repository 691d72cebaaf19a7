// Status and Result<T>: a Result holds a value or an error, and reading the
// value of an error is a bug that stops the process, naming the error.
#include "common/status.h"

#include <gtest/gtest.h>

#include <string>

namespace ring {
namespace {

Result<int> Parse(const std::string& text) {
  if (text.empty()) return InvalidArgument("empty");
  return static_cast<int>(text.size());
}

TEST(StatusTest, ResultHoldsItsValue) {
  auto r = Parse("abc");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), 3);
  EXPECT_EQ(*r, 3);
  EXPECT_EQ(std::move(r).value(), 3);
}

TEST(StatusTest, ResultHoldsItsError) {
  const auto r = Parse("");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.status().ToString(), "invalid_argument: empty");
}

TEST(StatusDeathTest, ValueOfAnErrorAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)Parse("").value(),
               "value of a Result that holds an error was read: invalid_argument: empty");
  EXPECT_DEATH((void)*Parse(""), "invalid_argument: empty");
  const auto r = Parse("");
  EXPECT_DEATH((void)r.value(), "invalid_argument: empty");
}

TEST(StatusDeathTest, ResultOfAnOkStatusAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)Result<int>(Status::Ok()), "Result was made of an OK status");
}

}  // namespace
}  // namespace ring
