// Model definitions as tar.gz: packing (round trip, .ringignore, the size
// limit, progress, byte-for-byte determinism) and Base64. Unpacking hostile
// archives is in archive_unpack_test.cc.
#include "common/archive.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "common/ringignore.h"
#include "tests/unit/common/archive_test_util.h"

namespace ring {
namespace {

using testing::CraftTarGz;
using testing::ScratchTest;
namespace fs = std::filesystem;

class PackTest : public ScratchTest {};

TEST_F(PackTest, RoundTripKeepsContentFoldersAndTheExecBit) {
  std::string binary;
  for (int i = 0; i < 100000; ++i) binary.push_back(static_cast<char>((i * 7919) % 256));
  binary += std::string(10, '\0');
  Write("run.sh", "#!/bin/sh\necho hi\n");
  fs::permissions(src() / "run.sh", fs::perms::owner_exec, fs::perm_options::add);
  Write("data/weights.bin", binary);
  Write("a/b/c/deep.txt", "deep");
  Write("empty.txt", "");
  fs::create_directories(src() / "empty_dir");
  fs::create_directories(src() / "a/empty_too");

  auto tar = PackDirectory(src().string());
  ASSERT_TRUE(tar.ok()) << tar.status().ToString();
  const fs::path out = root_ / "out";
  ASSERT_TRUE(ValidateArchive(*tar).ok());
  ASSERT_TRUE(UnpackArchive(*tar, out.string()).ok());
  EXPECT_EQ(Read(out / "run.sh"), "#!/bin/sh\necho hi\n");
  EXPECT_EQ(Read(out / "data/weights.bin"), binary);
  EXPECT_EQ(Read(out / "a/b/c/deep.txt"), "deep");
  EXPECT_TRUE(fs::is_regular_file(out / "empty.txt"));
  EXPECT_EQ(fs::file_size(out / "empty.txt"), 0u);
  EXPECT_TRUE(fs::is_directory(out / "empty_dir"));
  EXPECT_TRUE(fs::is_empty(out / "empty_dir"));
  EXPECT_TRUE(fs::is_directory(out / "a/empty_too"));
  EXPECT_NE(fs::status(out / "run.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
  EXPECT_EQ(fs::status(out / "data/weights.bin").permissions() & fs::perms::owner_exec, fs::perms::none);

  // Exactly what was packed comes back: nothing more.
  size_t count = 0;
  for (auto it = fs::recursive_directory_iterator(out); it != fs::recursive_directory_iterator(); ++it)
    ++count;
  EXPECT_EQ(count,
            10u);  // run.sh, empty.txt, data/, weights.bin, a/, b/, c/, deep.txt, empty_too/, empty_dir/
}

TEST_F(PackTest, UnpackIntoAnExistingFolderWithOtherFiles) {
  Write("new.txt", "new");
  Write("keep.txt", "old", root_ / "out");
  auto tar = PackDirectory(src().string());
  ASSERT_TRUE(tar.ok());
  ASSERT_TRUE(UnpackArchive(*tar, (root_ / "out").string()).ok());
  EXPECT_EQ(Read(root_ / "out/new.txt"), "new");
  EXPECT_EQ(Read(root_ / "out/keep.txt"), "old");
}

TEST_F(PackTest, PackingIsDeterministic) {
  Write("b.txt", "bee");
  Write("a/x.bin", std::string(70000, 'x'));
  Write("c/d/e.txt", "e");
  auto first = PackDirectory(src().string());
  ASSERT_TRUE(first.ok());
  ASSERT_GT(first->size(), 10u);
  EXPECT_EQ(first->substr(4, 4), std::string(4, '\0'));  // no timestamp in the gzip header
  EXPECT_EQ(*PackDirectory(src().string()), *first);
  // Neither file times nor the time of packing reach the bytes.
  fs::last_write_time(src() / "b.txt", fs::file_time_type::clock::now() - std::chrono::hours(24 * 400));
  fs::last_write_time(src() / "c/d", fs::file_time_type::clock::now() - std::chrono::hours(3));
  EXPECT_EQ(*PackDirectory(src().string()), *first);
}

TEST_F(PackTest, RingignoreLeavesFilesOut) {
  Write(".ringignore",
        "# build output\n"
        "*.o\n"
        "\n"
        "   \n"
        "build/\n"
        "/data\n"
        "# /keep.txt would be a comment, not a rule\n");
  Write("main.cc", "int main() {}");
  Write("keep.txt", "kept");
  Write("main.o", "obj");
  Write("lib/x.o", "obj");
  Write("lib/x.cc", "src");
  Write("build/big.bin", "big");
  Write("sub/build/also.bin", "big");
  Write("build.txt", "a file named like the folder");
  Write("data/raw.csv", "1,2");
  Write("sub/data/kept.csv", "3,4");
  auto tar = PackDirectory(src().string());
  ASSERT_TRUE(tar.ok()) << tar.status().ToString();
  const fs::path out = root_ / "out";
  ASSERT_TRUE(UnpackArchive(*tar, out.string()).ok());
  EXPECT_TRUE(fs::exists(out / "main.cc"));
  EXPECT_TRUE(fs::exists(out / "keep.txt"));
  EXPECT_TRUE(fs::exists(out / ".ringignore"));
  EXPECT_TRUE(fs::exists(out / "lib/x.cc"));
  EXPECT_FALSE(fs::exists(out / "main.o"));
  EXPECT_FALSE(fs::exists(out / "lib/x.o"));
  EXPECT_FALSE(fs::exists(out / "build"));
  EXPECT_FALSE(fs::exists(out / "sub/build"));  // `build/` matches at any depth
  EXPECT_TRUE(fs::exists(out / "build.txt"));   // `build/` matches folders only
  EXPECT_FALSE(fs::exists(out / "data"));
  EXPECT_TRUE(fs::exists(out / "sub/data/kept.csv"));  // `/data` is anchored at the root
}

TEST(IgnoreRulesTest, GitignoreLikePatterns) {
  const auto rules =
      IgnoreRules::Parse("# comment\r\n*.o\n!keep.o\n\nbuild/\n/data\ndocs/*.md\n**/cache\n  \n\\#literal\n");
  EXPECT_TRUE(rules.Ignored("a.o", false));
  EXPECT_TRUE(rules.Ignored("deep/er/b.o", false));
  EXPECT_FALSE(rules.Ignored("keep.o", false));  // re-included by a later line
  EXPECT_FALSE(rules.Ignored("sub/keep.o", false));
  EXPECT_TRUE(rules.Ignored("build", true));
  EXPECT_TRUE(rules.Ignored("x/build", true));
  EXPECT_FALSE(rules.Ignored("build", false));  // `build/` names folders only
  EXPECT_TRUE(rules.Ignored("data", true));
  EXPECT_FALSE(rules.Ignored("x/data", true));  // anchored at the root
  EXPECT_TRUE(rules.Ignored("docs/a.md", false));
  EXPECT_FALSE(rules.Ignored("docs/sub/a.md", false));
  EXPECT_FALSE(rules.Ignored("other/docs/a.md", false));
  EXPECT_TRUE(rules.Ignored("cache", true));
  EXPECT_TRUE(rules.Ignored("a/b/cache", false));
  EXPECT_TRUE(rules.Ignored("#literal", false));
  EXPECT_FALSE(rules.Ignored("# comment", false));
  EXPECT_FALSE(rules.Ignored("main.cc", false));
  EXPECT_TRUE(IgnoreRules::Parse("# only comments\n\n").empty());
  EXPECT_TRUE(IgnoreRules::Load("/nonexistent/.ringignore").empty());
}

TEST_F(PackTest, OversizedFolderIsRefusedWithBothSizes) {
  Write("big.bin", std::string(3 << 20, 'x'));
  PackOptions options;
  options.max_bytes = 2 << 20;
  auto tar = PackDirectory(src().string(), options);
  ASSERT_FALSE(tar.ok());
  EXPECT_EQ(tar.status().code(), ErrorCode::kTooLarge);
  EXPECT_EQ(tar.status().message(),
            "model directory " + src().string() +
                " is 3.0 MiB, over the 2.0 MiB limit; add large files to .ringignore");
  // Following the advice works: ignored files do not count.
  Write(".ringignore", "*.bin\n");
  Write("small.txt", "s");
  EXPECT_TRUE(PackDirectory(src().string(), options).ok());
}

TEST_F(PackTest, ProgressRisesToTheTotal) {
  Write("a.bin", std::string(200000, 'a'));
  Write("b.bin", std::string(100000, 'b'));
  Write("c/empty.txt", "");
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  PackOptions options;
  options.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
  ASSERT_TRUE(PackDirectory(src().string(), options).ok());
  ASSERT_GE(calls.size(), 3u);  // more than one step for 300 kB
  EXPECT_GT(calls.front().first, 0u);
  EXPECT_LT(calls.front().first, 300000u);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, 300000u);
    EXPECT_LE(calls[i].first, calls[i].second);
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first);
    }
  }
  EXPECT_EQ(calls.back(), std::make_pair(uint64_t{300000}, uint64_t{300000}));
}

TEST_F(PackTest, NotAFolderIsRefused) {
  EXPECT_FALSE(PackDirectory((root_ / "missing").string()).ok());
  Write("file.txt", "x");
  EXPECT_EQ(PackDirectory((src() / "file.txt").string()).status().code(), ErrorCode::kInvalidArgument);
}

TEST(Base64Test, RoundTripsEveryByteAndLength) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= 10; ++n) {
    for (size_t start : {size_t{0}, size_t{100}, size_t{250} - n}) {
      const std::string plain = all.substr(start, n);
      const std::string encoded = Base64Encode(plain);
      EXPECT_EQ(encoded.size(), (n + 2) / 3 * 4);
      auto decoded = Base64Decode(encoded);
      ASSERT_TRUE(decoded.ok()) << encoded << ": " << decoded.status().message();
      EXPECT_EQ(*decoded, plain);
    }
  }
  EXPECT_EQ(*Base64Decode(Base64Encode(all)), all);
}

TEST(Base64Test, KnownVectors) {
  // RFC 4648, section 10, plus a byte of every alphabet extreme.
  const std::vector<std::pair<std::string, std::string>> v = {{"", ""},
                                                              {"f", "Zg=="},
                                                              {"fo", "Zm8="},
                                                              {"foo", "Zm9v"},
                                                              {"foob", "Zm9vYg=="},
                                                              {"fooba", "Zm9vYmE="},
                                                              {"foobar", "Zm9vYmFy"},
                                                              {"\xfb\xff\xbf", "+/+/"},
                                                              {std::string("\0\0\0", 3), "AAAA"}};
  for (const auto& [plain, encoded] : v) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    auto decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded.ok()) << encoded;
    EXPECT_EQ(*decoded, plain);
  }
}

TEST(Base64Test, BadInputIsRefused) {
  for (const char* bad : {"Zm9", "Z", "Zm9vY", "Zg"}) {  // length not a multiple of 4
    auto r = Base64Decode(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  for (const std::string& bad :
       {std::string("Zm9v!A=="), std::string("Zm-v"), std::string("Zm_v"),
        std::string("Zm9v\x80\x80\x80\x80"), std::string("Zm9\0", 4)}) {  // a character outside the alphabet
    auto r = Base64Decode(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  for (const char* bad : {"Z=9v", "=Zm9", "Zg==Zg==", "Zm9v=", "Zg===", "Zm=v"}) {  // misplaced padding
    auto r = Base64Decode(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(Base64Decode("Zm8==").ok());  // too much padding
  EXPECT_FALSE(Base64Decode("====").ok());
  // The messages say what is wrong and where.
  EXPECT_EQ(Base64Decode("Zm9v!A==").status().message(),
            "base64 text has an invalid character '!' at offset 4");
  EXPECT_EQ(Base64Decode(std::string("Zm9v\x01"
                                     "A=="))
                .status()
                .message(),
            "base64 text has an invalid character byte 0x01 at offset 4");
  EXPECT_EQ(Base64Decode("Zm9v-A==").status().message(),
            "base64 text has an invalid character '-' at offset 4");  // URL-safe alphabet is not base64
  EXPECT_EQ(Base64Decode("Zm9").status().message(),
            "base64 text is truncated: its length is not a multiple of 4");
}

TEST(Base64Test, LineBreaksAreSkipped) {
  EXPECT_EQ(*Base64Decode("Zm9v\nYmFy\r\n"), "foobar");
  EXPECT_EQ(*Base64Decode(" Zm8=\n"), "fo");
}

}  // namespace
}  // namespace ring
