// Model definitions as tar.gz: packing with .ringignore and limits, and
// unpacking that refuses anything that could escape its folder.
#include "common/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ring {
namespace {

namespace fs = std::filesystem;

class ArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("archive-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const fs::path& rel, const std::string& text, fs::path base = {}) {
    const fs::path p = (base.empty() ? root_ / "src" : base) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  static std::string Read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  // A tar.gz built entry by entry, to craft archives PackDirectory never makes.
  struct Entry {
    std::string name;
    mode_t type = AE_IFREG;
    std::string data;
    std::string link;
    bool hardlink = false;
  };
  static std::string Craft(const std::vector<Entry>& entries) {
    std::string out;
    struct archive* a = archive_write_new();
    archive_write_add_filter_gzip(a);
    archive_write_set_format_pax_restricted(a);
    archive_write_open(
        a, &out, nullptr,
        [](struct archive*, void* c, const void* b, size_t n) -> la_ssize_t {
          static_cast<std::string*>(c)->append(static_cast<const char*>(b), n);
          return static_cast<la_ssize_t>(n);
        },
        nullptr);
    for (const auto& e : entries) {
      struct archive_entry* entry = archive_entry_new();
      archive_entry_set_pathname(entry, e.name.c_str());
      archive_entry_set_filetype(entry, e.type);
      archive_entry_set_perm(entry, 0644);
      if (e.hardlink)
        archive_entry_set_hardlink(entry, e.link.c_str());
      else if (!e.link.empty())
        archive_entry_set_symlink(entry, e.link.c_str());
      archive_entry_set_size(entry,
                             e.type == AE_IFREG && !e.hardlink ? static_cast<la_int64_t>(e.data.size()) : 0);
      archive_write_header(a, entry);
      if (e.type == AE_IFREG && !e.data.empty()) archive_write_data(a, e.data.data(), e.data.size());
      archive_entry_free(entry);
    }
    archive_write_close(a);
    archive_write_free(a);
    return out;
  }

  fs::path root_;
};

TEST_F(ArchiveTest, RoundTripKeepsContentFoldersAndTheExecBit) {
  std::string binary;
  for (int i = 0; i < 1000; ++i) binary.push_back(static_cast<char>(i * 7));
  Write("run.sh", "#!/bin/sh\necho hi\n");
  fs::permissions(root_ / "src/run.sh", fs::perms::owner_exec, fs::perm_options::add);
  Write("data/weights.bin", binary);
  Write("a/b/c/deep.txt", "deep");
  fs::create_directories(root_ / "src/empty");
  auto tar = PackDirectory((root_ / "src").string());
  ASSERT_TRUE(tar.ok()) << tar.status().ToString();
  ASSERT_TRUE(UnpackArchive(*tar, (root_ / "out").string()).ok());
  EXPECT_EQ(Read(root_ / "out/run.sh"), "#!/bin/sh\necho hi\n");
  EXPECT_EQ(Read(root_ / "out/data/weights.bin"), binary);
  EXPECT_EQ(Read(root_ / "out/a/b/c/deep.txt"), "deep");
  EXPECT_TRUE(fs::is_directory(root_ / "out/empty"));
  EXPECT_NE(fs::status(root_ / "out/run.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
  EXPECT_EQ(fs::status(root_ / "out/data/weights.bin").permissions() & fs::perms::owner_exec,
            fs::perms::none);
  // Packing is deterministic.
  EXPECT_EQ(*PackDirectory((root_ / "src").string()), *tar);
}

TEST_F(ArchiveTest, RingignoreLeavesFilesOut) {
  Write(".ringignore", "# build output\n*.o\n\nbuild/\n/data\n");
  Write("main.cc", "int main() {}");
  Write("main.o", "obj");
  Write("lib/x.o", "obj");
  Write("build/big.bin", "big");
  Write("data/raw.csv", "1,2");
  Write("sub/data/kept.csv", "3,4");
  auto tar = PackDirectory((root_ / "src").string());
  ASSERT_TRUE(tar.ok());
  ASSERT_TRUE(UnpackArchive(*tar, (root_ / "out").string()).ok());
  EXPECT_TRUE(fs::exists(root_ / "out/main.cc"));
  EXPECT_FALSE(fs::exists(root_ / "out/main.o"));
  EXPECT_FALSE(fs::exists(root_ / "out/lib/x.o"));
  EXPECT_FALSE(fs::exists(root_ / "out/build"));
  EXPECT_FALSE(fs::exists(root_ / "out/data"));
  EXPECT_TRUE(fs::exists(root_ / "out/sub/data/kept.csv"));  // `/data` is anchored at the root
}

TEST_F(ArchiveTest, OversizedFolderIsRefusedWithBothSizes) {
  Write("big.bin", std::string(3 << 20, 'x'));
  PackOptions options;
  options.max_bytes = 2 << 20;
  auto tar = PackDirectory((root_ / "src").string(), options);
  ASSERT_FALSE(tar.ok());
  EXPECT_EQ(tar.status().code(), ErrorCode::kTooLarge);
  EXPECT_NE(tar.status().message().find("3.0 MiB, over the 2.0 MiB limit"), std::string::npos)
      << tar.status().message();
  EXPECT_NE(tar.status().message().find(".ringignore"), std::string::npos);
}

TEST_F(ArchiveTest, ProgressEndsAtTheTotal) {
  Write("a.bin", std::string(200000, 'a'));
  Write("b.bin", std::string(100000, 'b'));
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  PackOptions options;
  options.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
  ASSERT_TRUE(PackDirectory((root_ / "src").string(), options).ok());
  ASSERT_FALSE(calls.empty());
  for (size_t i = 1; i < calls.size(); ++i) EXPECT_GE(calls[i].first, calls[i - 1].first);
  EXPECT_EQ(calls.back(), std::make_pair(uint64_t{300000}, uint64_t{300000}));
}

TEST_F(ArchiveTest, MaliciousArchivesAreRefusedAndWriteNothing) {
  struct Case {
    const char* what;
    std::vector<Entry> entries;
  };
  const std::vector<Case> cases = {
      {"parent path", {{"ok.txt", AE_IFREG, "fine"}, {"../evil", AE_IFREG, "x"}}},
      {"absolute path", {{"/tmp/evil-abs", AE_IFREG, "x"}}},
      {"hidden parent", {{"a/../../evil", AE_IFREG, "x"}}},
      {"symlink to an absolute path", {{"link", AE_IFLNK, "", "/etc"}}},
      {"symlink out of the folder", {{"sub/link", AE_IFLNK, "", "../../x"}}},
      {"hard link", {{"hard", AE_IFREG, "", "/etc/passwd", true}}},
      {"fifo", {{"pipe", AE_IFIFO}}},
  };
  for (const auto& c : cases) {
    const std::string tar = Craft(c.entries);
    const fs::path dest = root_ / "dest";
    fs::remove_all(dest);
    EXPECT_FALSE(ValidateArchive(tar).ok()) << c.what;
    Status s = UnpackArchive(tar, dest.string());
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << c.what << ": " << s.message();
    EXPECT_TRUE(fs::is_empty(dest)) << c.what << ": something was written";
    EXPECT_FALSE(fs::exists(root_ / "evil")) << c.what;
  }
}

TEST_F(ArchiveTest, LimitsAreEnforcedWhileReading) {
  std::vector<Entry> many;
  for (int i = 0; i < 20; ++i) many.push_back({"f" + std::to_string(i), AE_IFREG, "x"});
  UnpackLimits limits;
  limits.max_files = 10;
  EXPECT_EQ(UnpackArchive(Craft(many), (root_ / "d1").string(), limits).code(), ErrorCode::kTooLarge);
  limits = {};
  limits.max_total_bytes = 1000;
  EXPECT_EQ(UnpackArchive(Craft({{"big", AE_IFREG, std::string(5000, 'z')}}), (root_ / "d2").string(), limits)
                .code(),
            ErrorCode::kTooLarge);
  EXPECT_TRUE(fs::is_empty(root_ / "d2"));
}

TEST_F(ArchiveTest, GarbageIsRefused) {
  EXPECT_FALSE(ValidateArchive("not a tarball").ok());
  Write("a.txt", std::string(100000, 'q'));
  auto tar = PackDirectory((root_ / "src").string());
  ASSERT_TRUE(tar.ok());
  EXPECT_FALSE(ValidateArchive(tar->substr(0, tar->size() / 2)).ok());  // truncated
}

TEST(Base64Test, RoundTripsEveryByteAndLength) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= 10; ++n) EXPECT_EQ(*Base64Decode(Base64Encode(all.substr(0, n))), all.substr(0, n));
  EXPECT_EQ(*Base64Decode(Base64Encode(all)), all);
}

TEST(Base64Test, KnownVectors) {
  const std::vector<std::pair<std::string, std::string>> v = {{"", ""},
                                                              {"f", "Zg=="},
                                                              {"fo", "Zm8="},
                                                              {"foo", "Zm9v"},
                                                              {"foob", "Zm9vYg=="},
                                                              {"fooba", "Zm9vYmE="},
                                                              {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : v) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    EXPECT_EQ(*Base64Decode(encoded), plain);
  }
}

TEST(Base64Test, BadInputIsRefused) {
  EXPECT_FALSE(Base64Decode("Zm9").ok());       // length
  EXPECT_FALSE(Base64Decode("Zm9v!A==").ok());  // character
  EXPECT_FALSE(Base64Decode("Z=9v").ok());      // padding in the middle
  EXPECT_FALSE(Base64Decode("Zg==Zg==").ok());  // padding before the end
}

}  // namespace
}  // namespace ring
