// Unpacking archives built by hand to attack the unpacker: paths and links
// that leave the destination, hard links, devices, archives over the limits,
// and input that is not a tar.gz at all. Each is refused by ValidateArchive
// and by UnpackArchive, and nothing is written anywhere (UnpackArchive checks
// the whole archive before it creates a file).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "common/archive.h"
#include "tests/unit/common/archive_test_util.h"

namespace ring {
namespace {

using testing::CraftTarGz;
using testing::ScratchTest;
using testing::TarEntry;
namespace fs = std::filesystem;

class UnpackTest : public ScratchTest {
 protected:
  // Expects `tar` refused with `code` and a message containing `needle`, with
  // nothing written under the scratch folder (which holds dest/ and its
  // parents, where an escape would land).
  void ExpectRefused(const std::string& what, const std::string& tar, ErrorCode code,
                     const std::string& needle, const UnpackLimits& limits = {}) {
    SCOPED_TRACE(what);
    const Status checked = ValidateArchive(tar, limits);
    EXPECT_EQ(checked.code(), code) << checked.ToString();
    EXPECT_NE(checked.message().find(needle), std::string::npos) << checked.message();
    const fs::path dest = root_ / "a/b/dest";
    const Status unpacked = UnpackArchive(tar, dest.string(), limits);
    EXPECT_EQ(unpacked.code(), code) << unpacked.ToString();
    EXPECT_EQ(unpacked.message(), checked.message());
    EXPECT_TRUE(fs::is_empty(root_)) << "something was written under " << root_;
    fs::remove_all(root_ / "a");
  }
};

TEST_F(UnpackTest, PathsThatLeaveTheFolderAreRefused) {
  ExpectRefused("parent", CraftTarGz({{"ok.txt", AE_IFREG, "fine"}, {"../evil", AE_IFREG, "x"}}),
                ErrorCode::kInvalidArgument, "\"../evil\" climbs out of the folder");
  ExpectRefused("hidden parent", CraftTarGz({{"a/../../x", AE_IFREG, "x"}}), ErrorCode::kInvalidArgument,
                "\"a/../../x\" climbs out of the folder");
  ExpectRefused("parent after dot", CraftTarGz({{"./../../../x", AE_IFREG, "x"}}),
                ErrorCode::kInvalidArgument, "climbs out of the folder");
  ExpectRefused("folder named ..", CraftTarGz({{"sub/../..", AE_IFDIR}}), ErrorCode::kInvalidArgument,
                "climbs out of the folder");
  const bool etc_x_existed = fs::exists("/etc/x");
  ExpectRefused("absolute", CraftTarGz({{"/etc/x", AE_IFREG, "x"}}), ErrorCode::kInvalidArgument,
                "\"/etc/x\" has an absolute path");
  EXPECT_EQ(fs::exists("/etc/x"), etc_x_existed);
  const std::string abs = (root_ / "abs-evil").string();
  ExpectRefused("absolute into the scratch folder", CraftTarGz({{abs, AE_IFREG, "x"}}),
                ErrorCode::kInvalidArgument, "has an absolute path");
}

TEST_F(UnpackTest, LinksThatLeaveTheFolderAreRefused) {
  ExpectRefused("symlink to the root", CraftTarGz({{"root", AE_IFLNK, "", "/"}}), ErrorCode::kInvalidArgument,
                "link to the absolute path \"/\"");
  ExpectRefused("symlink to /etc", CraftTarGz({{"link", AE_IFLNK, "", "/etc"}}), ErrorCode::kInvalidArgument,
                "\"link\" is a link to the absolute path \"/etc\"");
  ExpectRefused("symlink up and out", CraftTarGz({{"sub", AE_IFDIR}, {"sub/link", AE_IFLNK, "", "../../x"}}),
                ErrorCode::kInvalidArgument, "\"sub/link\" is a link to \"../../x\", outside the folder");
  // Each link alone stays inside; followed through the first, the second does not.
  ExpectRefused("chained symlinks",
                CraftTarGz({{"x", AE_IFDIR}, {"x/up", AE_IFLNK, "", ".."}, {"out", AE_IFLNK, "", "x/up/.."}}),
                ErrorCode::kInvalidArgument, "\"out\" is a link to \"x/up/..\", outside the folder");
  ExpectRefused("chained symlinks, the outer one first",
                CraftTarGz({{"x", AE_IFDIR}, {"out", AE_IFLNK, "", "x/up/.."}, {"x/up", AE_IFLNK, "", ".."}}),
                ErrorCode::kInvalidArgument, "outside the folder");
  ExpectRefused("symlink loop", CraftTarGz({{"a", AE_IFLNK, "", "b"}, {"b", AE_IFLNK, "", "a"}}),
                ErrorCode::kInvalidArgument, "loop");
  ExpectRefused("file written through a symlink",
                CraftTarGz({{"sub", AE_IFDIR}, {"l", AE_IFLNK, "", "sub"}, {"l/evil", AE_IFREG, "x"}}),
                ErrorCode::kInvalidArgument, "\"l/evil\" lies below the link \"l\"");
  ExpectRefused("file below a file", CraftTarGz({{"f", AE_IFREG, "x"}, {"f/g", AE_IFREG, "y"}}),
                ErrorCode::kInvalidArgument, "\"f/g\" lies below the file \"f\"");
  ExpectRefused("file replaced by a link",
                CraftTarGz({{"f", AE_IFREG, "x"}, {"f", AE_IFLNK, "", "/etc/passwd"}}),
                ErrorCode::kInvalidArgument, "absolute");
  ExpectRefused("name given twice", CraftTarGz({{"f", AE_IFREG, "x"}, {"f", AE_IFLNK, "", "g"}}),
                ErrorCode::kInvalidArgument, "\"f\" appears twice");
  ExpectRefused("hard link to /etc/passwd", CraftTarGz({{"hard", AE_IFREG, "", "/etc/passwd", true}}),
                ErrorCode::kInvalidArgument,
                "\"hard\" is a hard link to \"/etc/passwd\", outside the folder");
  ExpectRefused("hard link up", CraftTarGz({{"hard", AE_IFREG, "", "../x", true}}),
                ErrorCode::kInvalidArgument, "outside the folder");
  ExpectRefused("hard link to a later file",
                CraftTarGz({{"hard", AE_IFREG, "", "f", true}, {"f", AE_IFREG, "x"}}),
                ErrorCode::kInvalidArgument, "not a file before it in the archive");
  ExpectRefused("hard link to nothing in the archive",
                CraftTarGz({{"hard", AE_IFREG, "", "later.txt", true}}), ErrorCode::kInvalidArgument,
                "not a file before it in the archive");
}

TEST_F(UnpackTest, DevicesPipesAndSocketsAreRefused) {
  ExpectRefused("fifo", CraftTarGz({{"pipe", AE_IFIFO}}), ErrorCode::kInvalidArgument,
                "\"pipe\" is a device, pipe or socket");
  ExpectRefused("character device", CraftTarGz({{"null", AE_IFCHR}}), ErrorCode::kInvalidArgument,
                "is a device, pipe or socket");
  ExpectRefused("block device", CraftTarGz({{"disk", AE_IFBLK}}), ErrorCode::kInvalidArgument,
                "is a device, pipe or socket");
}

TEST_F(UnpackTest, LimitsAreEnforced) {
  std::vector<TarEntry> twenty;
  for (int i = 0; i < 20; ++i) twenty.push_back({"f" + std::to_string(i), AE_IFREG, "x"});
  UnpackLimits limits;
  limits.max_files = 19;
  ExpectRefused("too many files", CraftTarGz(twenty), ErrorCode::kTooLarge, "the archive holds over 19 files",
                limits);
  limits.max_files = 20;
  EXPECT_TRUE(ValidateArchive(CraftTarGz(twenty), limits).ok());

  limits = {};
  limits.max_total_bytes = 1000;
  ExpectRefused("one big file", CraftTarGz({{"big", AE_IFREG, std::string(5000, 'z')}}), ErrorCode::kTooLarge,
                "the archive unpacks to over", limits);
  ExpectRefused("many small files",
                CraftTarGz({{"a", AE_IFREG, std::string(400, 'a')},
                            {"b", AE_IFREG, std::string(400, 'b')},
                            {"c", AE_IFREG, std::string(400, 'c')}}),
                ErrorCode::kTooLarge, "the archive unpacks to over", limits);
  ExpectRefused("hard links count their bytes",
                CraftTarGz({{"a", AE_IFREG, std::string(600, 'a')}, {"b", AE_IFREG, "", "a", true}}),
                ErrorCode::kTooLarge, "the archive unpacks to over", limits);
  const std::string exact =
      CraftTarGz({{"a", AE_IFREG, std::string(600, 'a')}, {"b", AE_IFREG, std::string(400, 'b')}});
  EXPECT_TRUE(ValidateArchive(exact, limits).ok());
  EXPECT_TRUE(UnpackArchive(exact, (root_ / "exact").string(), limits).ok());
}

TEST_F(UnpackTest, LinksThatStayInsideAreKept) {
  const std::string tar = CraftTarGz({{"a.txt", AE_IFREG, "hello"},
                                      {"b", AE_IFLNK, "", "a.txt"},
                                      {"sub", AE_IFDIR},
                                      {"sub/up", AE_IFLNK, "", "../a.txt"},
                                      {"sub/same", AE_IFLNK, "", "./.."},
                                      {"copy.txt", AE_IFREG, "", "a.txt", true}});
  ASSERT_TRUE(ValidateArchive(tar).ok()) << ValidateArchive(tar).ToString();
  const fs::path out = root_ / "out";
  ASSERT_TRUE(UnpackArchive(tar, out.string()).ok());
  EXPECT_TRUE(fs::is_symlink(out / "b"));
  EXPECT_EQ(fs::read_symlink(out / "b"), "a.txt");
  EXPECT_EQ(Read(out / "b"), "hello");
  EXPECT_EQ(Read(out / "sub/up"), "hello");
  EXPECT_EQ(Read(out / "copy.txt"), "hello");
  EXPECT_FALSE(fs::is_symlink(out / "copy.txt"));
}

TEST_F(UnpackTest, LinkChainsAndRepeatedFoldersInsideAreKept) {
  TarEntry lib_so{"./lib/libx.so.1.2", AE_IFREG, "elf"};
  lib_so.perm = 0755;
  const std::string tar = CraftTarGz({{"./lib", AE_IFDIR},
                                      lib_so,
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

TEST_F(UnpackTest, LinksAlreadyInTheDestinationAreNotFollowed) {
  const fs::path dest = root_ / "dest";
  fs::create_directories(root_ / "outside");
  fs::create_directories(dest);
  fs::create_directory_symlink(root_ / "outside", dest / "sub");
  const Status s = UnpackArchive(CraftTarGz({{"sub/evil", AE_IFREG, "x"}}), dest.string());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("through the link"), std::string::npos) << s.message();
  EXPECT_TRUE(fs::is_empty(root_ / "outside"));
}

TEST_F(UnpackTest, InputThatIsNotATarGzIsRefused) {
  std::string noise(4096, '\0');
  std::mt19937 rng(7);
  for (auto& c : noise) c = static_cast<char>(rng());
  for (const auto& [what, bytes] :
       std::vector<std::pair<std::string, std::string>>{{"empty", ""},
                                                        {"text", "not a tarball"},
                                                        {"noise", noise},
                                                        {"gzip magic then noise", "\x1f\x8b" + noise}}) {
    SCOPED_TRACE(what);
    const Status s = ValidateArchive(bytes);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.ToString();
    EXPECT_FALSE(s.message().empty());
    EXPECT_FALSE(UnpackArchive(bytes, (root_ / "dest").string()).ok());
    EXPECT_FALSE(fs::exists(root_ / "dest"));
  }
}

TEST_F(UnpackTest, TruncatedArchiveIsRefused) {
  std::string big;
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) big.push_back(static_cast<char>(rng() % 16 + 'a'));  // compresses poorly
  const std::string tar = CraftTarGz({{"one.txt", AE_IFREG, big}, {"two.txt", AE_IFREG, big}});
  ASSERT_TRUE(ValidateArchive(tar).ok());
  for (size_t keep : {size_t{10}, tar.size() / 4, tar.size() / 2, tar.size() * 3 / 4}) {
    SCOPED_TRACE("kept " + std::to_string(keep) + " of " + std::to_string(tar.size()) + " bytes");
    const std::string cut = tar.substr(0, keep);
    EXPECT_EQ(ValidateArchive(cut).code(), ErrorCode::kInvalidArgument);
    EXPECT_FALSE(UnpackArchive(cut, (root_ / "dest").string()).ok());
    EXPECT_FALSE(fs::exists(root_ / "dest"));
  }
}

}  // namespace
}  // namespace ring
