// The CLI's text helpers: the table formatter and value formatting.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/format.h"
#include "cli/table.h"

namespace ring::cli {
namespace {

TEST(CliTableTest, AlignsColumnsUnderUpperCaseHeaders) {
  Table table({"id", "name", "state"});
  table.AddRow({"1", "quadratic", "ACTIVE"});
  table.AddRow({"12", "mnist", "COMPLETED"});
  std::ostringstream out;
  table.Print(out);
  EXPECT_EQ(out.str(),
            "ID  NAME       STATE\n"
            "1   quadratic  ACTIVE\n"
            "12  mnist      COMPLETED\n");
}

TEST(CliTableTest, CutsLongCellsAndFlattensNewlines) {
  Table table({"a", "b"});
  table.SetMaxWidth(0, 8);
  table.AddRow({"abcdefghijkl", "x\ny"});
  table.AddRow({"short"});  // missing cells print empty
  std::ostringstream out;
  table.Print(out);
  EXPECT_EQ(out.str(),
            "A         B\n"
            "abcde...  x y\n"
            "short\n");
}

TEST(CliTableTest, CountsUtf8CharactersNotBytes) {
  Table table({"name", "x"});
  table.AddRow({"héllo", "1"});
  table.AddRow({"hello", "2"});
  std::ostringstream out;
  table.Print(out);
  EXPECT_EQ(out.str(),
            "NAME   X\n"
            "héllo  1\n"
            "hello  2\n");
  EXPECT_EQ(DisplayWidth("héllo"), 5u);
}

TEST(CliTableTest, EmptyTablePrintsTheHeader) {
  Table table({"id"});
  std::ostringstream out;
  table.Print(out);
  EXPECT_EQ(out.str(), "ID\n");
}

TEST(CliFormatTest, FormatsValuesHparamsAndSizes) {
  EXPECT_EQ(FormatValue(nullptr), "-");
  EXPECT_EQ(FormatValue(0.123456789), "0.123457");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue("x"), "x");
  EXPECT_EQ(FormatHparams(nlohmann::json::parse(R"({"lr":0.05,"opt":{"m":0.9},"name":"a"})")),
            "lr=0.05 name=a opt.m=0.9");
  EXPECT_EQ(FormatHparams(nlohmann::json::object()), "-");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(64ull << 20), "64.0 MiB");
  EXPECT_EQ(FormatProgress(0.456), "45%");
  EXPECT_EQ(FormatProgress(nullptr), "-");
  EXPECT_EQ(Field(nlohmann::json::parse(R"({"a":null})"), "a"), "-");
  EXPECT_EQ(Field(nlohmann::json::parse(R"({"a":1})"), "b"), "-");
  EXPECT_EQ(GetInt(nlohmann::json::parse(R"({"a":"x"})"), "a", 7), 7);
  EXPECT_TRUE(Member(nlohmann::json::array(), "a").is_null());
}

TEST(CliFormatTest, ParsesByteSizes) {
  EXPECT_EQ(ParseByteSize("100"), 100u);
  EXPECT_EQ(ParseByteSize("64M"), 64ull << 20);
  EXPECT_EQ(ParseByteSize("64MiB"), 64ull << 20);
  EXPECT_EQ(ParseByteSize("2k"), 2048u);
  EXPECT_EQ(ParseByteSize("1G"), 1ull << 30);
  EXPECT_FALSE(ParseByteSize("ten"));
  EXPECT_FALSE(ParseByteSize("10X"));
  EXPECT_FALSE(ParseByteSize(""));
  EXPECT_FALSE(ParseByteSize("99999999999999G"));
}

}  // namespace
}  // namespace ring::cli
