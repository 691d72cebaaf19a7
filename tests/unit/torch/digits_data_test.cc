// The digits example's loader: the shape and label counts of Debian's copy
// of the data set, the seeded split, and clear errors (path and line) for
// files that are missing, corrupted or shaped otherwise.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <string>

#include "digits_data.h"

namespace digits {
namespace {

namespace fs = std::filesystem;

// A scratch directory removed with the fixture.
class DigitsDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("digits-data-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path WriteGz(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    EXPECT_EQ(gzclose(f), Z_OK);
    return path;
  }

  // `rows` well-formed rows, each unique by its first two pixels; row i has
  // label i % 10 and pixels i % 17, i / 17 % 17, then (i + j) % 17.
  static std::string Rows(size_t rows) {
    std::string text;
    for (size_t i = 0; i < rows; ++i) {
      text += std::to_string(i % 17) + "," + std::to_string(i / 17 % 17) + ",";
      for (size_t j = 2; j < kPixels; ++j) text += std::to_string((i + j) % 17) + ",";
      text += std::to_string(i % 10) + "\n";
    }
    return text;
  }

  // The message of the DataError that loading `path` throws ("" if none).
  static std::string LoadError(const fs::path& path, size_t rows) {
    try {
      Load(path, rows);
    } catch (const DataError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(DigitsDataTest, DebianCopyHas1797ImagesOf64PixelsWithTheKnownLabelCounts) {
  if (!fs::exists(kDefaultPath)) GTEST_SKIP() << kDefaultPath << " is missing (install python3-sklearn)";
  const Dataset data = Load(kDefaultPath);
  ASSERT_EQ(data.size(), 1797u);
  ASSERT_EQ(data.pixels.size(), 1797u * 64);
  EXPECT_EQ(LabelCounts(data), (std::vector<size_t>{178, 182, 177, 183, 181, 182, 181, 179, 174, 180}));
  EXPECT_EQ(*std::max_element(data.pixels.begin(), data.pixels.end()), 16);
  // The first image is a 0: its first row of pixels is 0 0 5 13 9 1 0 0.
  EXPECT_EQ(data.labels[0], 0);
  EXPECT_EQ(std::vector<uint8_t>(data.pixels.begin(), data.pixels.begin() + 8),
            (std::vector<uint8_t>{0, 0, 5, 13, 9, 1, 0, 0}));
}

TEST_F(DigitsDataTest, ReadsWellFormedRowsWithOrWithoutTheLastNewline) {
  const Dataset data = Load(WriteGz("ok.csv.gz", Rows(25)), 25);
  ASSERT_EQ(data.size(), 25u);
  EXPECT_EQ(data.labels[13], 3);
  EXPECT_EQ(data.pixels[13 * kPixels + 5], 18 % 17);
  std::string no_newline = Rows(3);
  no_newline.pop_back();
  EXPECT_EQ(Load(WriteGz("last.csv.gz", no_newline), 3).size(), 3u);
}

TEST_F(DigitsDataTest, SplitIsSeededDisjointAndComplete) {
  const Dataset all = Load(WriteGz("ok.csv.gz", Rows(200)), 200);
  const Split a = SplitRecords(all, 40, 7);
  ASSERT_EQ(a.validation.size(), 40u);
  ASSERT_EQ(a.train.size(), 160u);
  // Every record lands in exactly one part: each row is unique by its pixels.
  std::set<std::vector<uint8_t>> seen;
  for (const Dataset* part : {&a.train, &a.validation})
    for (size_t i = 0; i < part->size(); ++i)
      seen.insert(
          std::vector<uint8_t>(part->pixels.begin() + static_cast<std::ptrdiff_t>(i * kPixels),
                               part->pixels.begin() + static_cast<std::ptrdiff_t>((i + 1) * kPixels)));
  EXPECT_EQ(seen.size(), 200u);
  std::vector<size_t> total = LabelCounts(a.train);
  for (size_t d = 0; d < kClasses; ++d) total[d] += LabelCounts(a.validation)[d];
  EXPECT_EQ(total, LabelCounts(all));

  const Split again = SplitRecords(all, 40, 7);
  EXPECT_EQ(again.validation.pixels, a.validation.pixels);
  EXPECT_EQ(again.train.labels, a.train.labels);
  EXPECT_NE(SplitRecords(all, 40, 8).validation.pixels, a.validation.pixels);

  EXPECT_THROW(SplitRecords(all, 0, 7), DataError);
  EXPECT_THROW(SplitRecords(all, 200, 7), DataError);
}

TEST_F(DigitsDataTest, BadRowsNameThePathAndTheLine) {
  struct Case {
    std::string line;
    std::string expected;
  };
  std::string short_row;
  for (size_t j = 0; j < kPixels; ++j) short_row += (j ? "," : "") + std::string("1");
  const std::string good = Rows(1).substr(0, Rows(1).size() - 1);
  const std::vector<Case> cases = {
      {short_row, "row has 64 fields, expected 65"},
      {good + ",3", "more than 65 fields"},
      {"0,0,0,0,17" + good.substr(good.find(',', 9)), "pixel 5 is 17, outside 0..16"},
      {good.substr(0, good.rfind(',')) + ",10", "label 10 is outside 0..9"},
      {good.substr(0, good.rfind(',')) + ",x", "field 65 is \"x\", not a non-negative integer"},
      {good.substr(0, good.rfind(',')) + ",-1", "field 65 is \"-1\""},
      {good.substr(0, good.rfind(',')) + ",", "field 65 is \"\""},
      {"", "empty line"},
  };
  for (const auto& c : cases) {
    const fs::path path = WriteGz("bad.csv.gz", Rows(2) + c.line + "\n" + Rows(2));
    const std::string error = LoadError(path, 5);
    EXPECT_NE(error.find(path.string() + ":3: "), std::string::npos) << error;
    EXPECT_NE(error.find(c.expected), std::string::npos) << "line \"" << c.line << "\": " << error;
  }
}

TEST_F(DigitsDataTest, WrongRowCountIsAnError) {
  const fs::path path = WriteGz("few.csv.gz", Rows(10));
  EXPECT_NE(LoadError(path, kRecords).find(path.string() + ": 10 rows, expected 1797"), std::string::npos)
      << LoadError(path, kRecords);
  EXPECT_NE(LoadError(path, 9).find(path.string() + ":10: more than the expected 9 rows"), std::string::npos)
      << LoadError(path, 9);
}

TEST_F(DigitsDataTest, TruncatedGzipAndMissingFilesAreClearErrors) {
  const fs::path whole = WriteGz("whole.csv.gz", Rows(300));
  std::ifstream in(whole, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const fs::path cut = dir_ / "cut.csv.gz";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  const std::string truncated = LoadError(cut, 300);
  EXPECT_NE(truncated.find(cut.string() + ": corrupted or not gzip-compressed"), std::string::npos)
      << truncated;

  const fs::path missing = dir_ / "nowhere" / "digits.csv.gz";
  const std::string error = LoadError(missing, kRecords);
  EXPECT_NE(error.find("cannot open the digits data " + missing.string()), std::string::npos) << error;
  EXPECT_NE(error.find("RING_DIGITS_PATH"), std::string::npos) << error;
}

TEST(DigitsDataPath, HyperparameterThenEnvironmentThenDebianDefault) {
  EXPECT_EQ(ResolvePath(std::string("/a.csv.gz"), "/b.csv.gz"), "/a.csv.gz");
  EXPECT_EQ(ResolvePath(std::nullopt, "/b.csv.gz"), "/b.csv.gz");
  EXPECT_EQ(ResolvePath(std::string(""), "/b.csv.gz"), "/b.csv.gz");
  EXPECT_EQ(ResolvePath(std::nullopt, ""), kDefaultPath);
  EXPECT_EQ(ResolvePath(std::nullopt, nullptr), kDefaultPath);
}

}  // namespace
}  // namespace digits
