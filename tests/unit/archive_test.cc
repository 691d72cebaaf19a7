// Model definitions as tar.gz: packing with .ringignore and limits, and
// unpacking that refuses anything that could escape its folder.
#include "common/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "common/ringignore.h"

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
    mode_t perm = 0644;
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
      archive_entry_set_perm(entry, e.perm);
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

  // True when `dir` is missing or empty: a refused archive writes nothing.
  static bool NothingIn(const fs::path& dir) { return !fs::exists(dir) || fs::is_empty(dir); }

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
    std::string message;  // a part of the error
  };
  const std::vector<Case> cases = {
      {"parent path", {{"ok.txt", AE_IFREG, "fine"}, {"../evil", AE_IFREG, "x"}}, "\"../evil\" climbs out"},
      {"absolute path", {{"/tmp/evil-abs", AE_IFREG, "x"}}, "has an absolute path"},
      {"hidden parent", {{"a/../../evil", AE_IFREG, "x"}}, "climbs out of the folder"},
      {"symlink to the root", {{"root", AE_IFLNK, "", "/"}}, "link to the absolute path \"/\""},
      {"symlink to an absolute path", {{"link", AE_IFLNK, "", "/etc"}}, "absolute path \"/etc\""},
      {"symlink out of the folder", {{"sub/link", AE_IFLNK, "", "../../x"}}, "outside the folder"},
      {"symlink chain that reads as inside",
       {{"x", AE_IFDIR}, {"x/up", AE_IFLNK, "", ".."}, {"out", AE_IFLNK, "", "x/up/.."}},
       "\"out\" is a link to \"x/up/..\", outside"},
      {"symlink chain, later link first",
       {{"x", AE_IFDIR}, {"out", AE_IFLNK, "", "x/up/.."}, {"x/up", AE_IFLNK, "", ".."}},
       "\"out\" is a link to \"x/up/..\", outside"},
      {"symlink loop", {{"a", AE_IFLNK, "", "b"}, {"b", AE_IFLNK, "", "a"}}, "loop of links"},
      {"file written through a link",
       {{"sub", AE_IFDIR}, {"l", AE_IFLNK, "", "sub"}, {"l/f", AE_IFREG, "x"}},
       "\"l/f\" lies below the link \"l\""},
      {"file below a file", {{"f", AE_IFREG, "x"}, {"f/g", AE_IFREG, "y"}}, "lies below the file \"f\""},
      {"file replaced by a link", {{"f", AE_IFREG, "x"}, {"f", AE_IFLNK, "", "/etc/passwd"}}, "absolute"},
      {"name given twice", {{"f", AE_IFREG, "x"}, {"f", AE_IFLNK, "", "g"}}, "appears twice"},
      {"hard link to an absolute path", {{"hard", AE_IFREG, "", "/etc/passwd", true}}, "outside the folder"},
      {"hard link out of the folder", {{"hard", AE_IFREG, "", "../x", true}}, "outside the folder"},
      {"hard link to a later file",
       {{"hard", AE_IFREG, "", "f", true}, {"f", AE_IFREG, "x"}},
       "not a file before it"},
      {"fifo", {{"pipe", AE_IFIFO}}, "device, pipe or socket"},
      {"character device", {{"null", AE_IFCHR}}, "device, pipe or socket"},
  };
  for (const auto& c : cases) {
    const std::string tar = Craft(c.entries);
    const fs::path dest = root_ / "dest";
    fs::remove_all(dest);
    EXPECT_FALSE(ValidateArchive(tar).ok()) << c.what;
    Status s = UnpackArchive(tar, dest.string());
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << c.what << ": " << s.message();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.what << ": " << s.message();
    EXPECT_TRUE(NothingIn(dest)) << c.what << ": something was written";
    EXPECT_FALSE(fs::exists(root_ / "evil")) << c.what;
  }
}

TEST_F(ArchiveTest, LinksAndHardLinksInsideTheFolderAreKept) {
  const std::string tar = Craft({{"./lib", AE_IFDIR},
                                 {"./lib/libx.so.1.2", AE_IFREG, "elf", "", false, 0755},
                                 {"lib/libx.so.1", AE_IFLNK, "", "libx.so.1.2"},
                                 {"lib/libx.so", AE_IFLNK, "", "./libx.so.1"},
                                 {"lib", AE_IFDIR},  // a folder may be listed twice
                                 {"top", AE_IFLNK, "", "lib/../lib/libx.so"},
                                 {"copy", AE_IFREG, "", "lib/libx.so.1.2", true}});
  ASSERT_TRUE(ValidateArchive(tar).ok()) << ValidateArchive(tar).message();
  const fs::path dest = root_ / "dest";
  ASSERT_TRUE(UnpackArchive(tar, dest.string()).ok());
  EXPECT_EQ(Read(dest / "top"), "elf");  // through three links
  EXPECT_EQ(fs::read_symlink(dest / "lib/libx.so"), "./libx.so.1");
  EXPECT_EQ(Read(dest / "copy"), "elf");
  EXPECT_FALSE(fs::is_symlink(dest / "copy"));
  EXPECT_NE(fs::status(dest / "copy").permissions() & fs::perms::owner_exec, fs::perms::none);
}

TEST_F(ArchiveTest, LinksAlreadyInTheDestinationAreNotFollowed) {
  const fs::path dest = root_ / "dest";
  fs::create_directories(root_ / "outside");
  fs::create_directories(dest);
  fs::create_directory_symlink(root_ / "outside", dest / "sub");
  Status s = UnpackArchive(Craft({{"sub/evil", AE_IFREG, "x"}}), dest.string());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("through the link"), std::string::npos) << s.message();
  EXPECT_TRUE(fs::is_empty(root_ / "outside"));
}

TEST_F(ArchiveTest, LimitsAreEnforcedWhileReading) {
  std::vector<Entry> many;
  for (int i = 0; i < 20; ++i) many.push_back({"f" + std::to_string(i), AE_IFREG, "x"});
  UnpackLimits limits;
  limits.max_files = 10;
  Status s = UnpackArchive(Craft(many), (root_ / "d1").string(), limits);
  EXPECT_EQ(s.code(), ErrorCode::kTooLarge);
  EXPECT_EQ(s.message(), "the archive holds over 10 files");
  EXPECT_TRUE(NothingIn(root_ / "d1"));
  limits.max_files = 20;
  EXPECT_TRUE(ValidateArchive(Craft(many), limits).ok());

  limits = {};
  limits.max_total_bytes = 1000;
  s = UnpackArchive(Craft({{"a", AE_IFREG, std::string(600, 'a')}, {"b", AE_IFREG, std::string(600, 'b')}}),
                    (root_ / "d2").string(), limits);
  EXPECT_EQ(s.code(), ErrorCode::kTooLarge);
  EXPECT_NE(s.message().find("unpacks to over"), std::string::npos) << s.message();
  EXPECT_TRUE(NothingIn(root_ / "d2"));
  // A hard link counts the bytes it copies.
  s = ValidateArchive(Craft({{"a", AE_IFREG, std::string(600, 'a')}, {"b", AE_IFREG, "", "a", true}}),
                      limits);
  EXPECT_EQ(s.code(), ErrorCode::kTooLarge);
}

TEST_F(ArchiveTest, PackedBytesDoNotDependOnTimeOrMtimes) {
  Write("a.txt", "alpha");
  Write("d/b.txt", "beta");
  auto first = PackDirectory((root_ / "src").string());
  ASSERT_TRUE(first.ok());
  ASSERT_GT(first->size(), 10u);
  EXPECT_EQ(first->substr(4, 4), std::string(4, '\0'));  // no timestamp in the gzip header
  fs::last_write_time(root_ / "src/a.txt", fs::file_time_type::clock::now() - std::chrono::hours(48));
  EXPECT_EQ(*PackDirectory((root_ / "src").string()), *first);
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
  EXPECT_FALSE(Base64Decode("Zm8==").ok());     // too much padding
  EXPECT_FALSE(Base64Decode("====").ok());
  auto bad = Base64Decode("Zm9v\x01" "A==");
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "base64 text has an invalid character byte 0x01 at offset 4");
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
