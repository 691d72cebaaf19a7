// Checkpoint files as the master sees them (master/files): allowed roots
// (pure), and the no-follow walks on a real temporary folder: links and hard
// links refused, removal that never follows a link.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "master/files/checkpoint_folder.h"
#include "master/files/checkpoint_roots.h"
#include "master/files/nofollow.h"

namespace ring {
namespace {

namespace fs = std::filesystem;

TEST(CheckpointRoots, HostPathMustBeAnAllowedRootOrBelowOne) {
  CheckpointRoots roots({"/data/ckpt/", "/mnt/shared"});
  EXPECT_TRUE(roots.CheckHostPath("/data/ckpt").ok());
  EXPECT_TRUE(roots.CheckHostPath("/mnt/shared/team-a/").ok());
  EXPECT_FALSE(roots.CheckHostPath("/mnt/sharedx").ok()) << "a prefix is not a parent";
  EXPECT_FALSE(roots.CheckHostPath("/mnt/shared/../etc").ok());
  EXPECT_FALSE(roots.CheckHostPath("/etc").ok());
  EXPECT_FALSE(roots.CheckHostPath("relative").ok());
  EXPECT_NE(roots.CheckHostPath("/etc").message().find("allowed_roots"), std::string::npos);
}

TEST(CheckpointRoots, StoragePathIsPlainAndRelative) {
  EXPECT_TRUE(CheckpointRoots::CheckStoragePath("").ok());
  EXPECT_TRUE(CheckpointRoots::CheckStoragePath("team/run-1/").ok());
  for (const char* bad : {"/abs", "..", "a/../b", "./a", "a//b"})
    EXPECT_FALSE(CheckpointRoots::CheckStoragePath(bad).ok()) << bad;
}

TEST(CheckpointRoots, LocateSplitsRootAndRest) {
  CheckpointRoots roots({"/mnt/shared", "/mnt/shared/deep"});
  CheckpointStorage s{"shared_fs", "/mnt/shared/deep/x", "runs/1"};
  auto where = roots.Locate(s);
  ASSERT_TRUE(where.ok());
  EXPECT_EQ(where->root, "/mnt/shared/deep");
  EXPECT_EQ(where->rel, "x/runs/1");
  EXPECT_FALSE(roots.Locate({"shared_fs", "/tmp", ""}).ok());
}

TEST(CheckpointUuid, OnlyTheIssuedShape) {
  EXPECT_TRUE(IsCheckpointUuid("0b0e6f57-7d1e-4f53-9a3c-6a1d1c0b9e11"));
  for (const char* bad : {"2026-11-25", "../x", "0B0E6F57-7D1E-4F53-9A3C-6A1D1C0B9E11", ""})
    EXPECT_FALSE(IsCheckpointUuid(bad)) << bad;
}

class NoFollow : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ring-nofollow-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path dir_;
};

TEST_F(NoFollow, OpeningRefusesLinksAtEveryLevel) {
  Write(dir_ / "root/a/file", "x");
  Write(dir_ / "secret/token", "s");
  fs::create_directory_symlink(dir_ / "secret", dir_ / "root/linked");
  fs::create_symlink(dir_ / "secret/token", dir_ / "root/a/token");
  fs::create_hard_link(dir_ / "secret/token", dir_ / "root/a/hard");
  const std::string root = (dir_ / "root").string();
  EXPECT_TRUE(OpenDirBelow(root, "a").ok());
  EXPECT_FALSE(OpenDirBelow(root, "linked").ok());
  EXPECT_FALSE(OpenDirBelow(root, "a/..").ok());
  auto a = OpenDirBelow(root, "a");
  ASSERT_TRUE(a.ok());
  struct stat st {};
  EXPECT_TRUE(OpenRegularFileAt(a->get(), "file", &st).ok());
  EXPECT_FALSE(OpenRegularFileAt(a->get(), "token", &st).ok());
  auto hard = OpenRegularFileAt(a->get(), "hard", &st);
  ASSERT_FALSE(hard.ok());
  EXPECT_NE(hard.status().message().find("hard links"), std::string::npos);
  auto root_fd = OpenDirBelow(root, "");
  ASSERT_TRUE(root_fd.ok());
  EXPECT_FALSE(OpenRegularFileAt(root_fd->get(), "linked/token", &st).ok());
}

TEST_F(NoFollow, RemovalTakesTheLinkNeverItsTarget) {
  Write(dir_ / "victim/precious", "keep");
  Write(dir_ / "root/ckpt/w.bin", "w");
  fs::create_symlink(dir_ / "victim/precious", dir_ / "root/ckpt/link");
  fs::create_directory_symlink(dir_ / "victim", dir_ / "root/ckpt/dirlink");
  fs::create_directory_symlink(dir_ / "victim", dir_ / "root/swapped");
  auto root = OpenDirBelow((dir_ / "root").string(), "");
  ASSERT_TRUE(root.ok());
  EXPECT_TRUE(RemoveTreeAt(root->get(), "ckpt").ok());
  EXPECT_TRUE(RemoveTreeAt(root->get(), "swapped").ok());
  EXPECT_TRUE(RemoveTreeAt(root->get(), "missing").ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "root/ckpt")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "root/swapped")));
  std::ifstream in(dir_ / "victim/precious");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "keep");
}

TEST_F(NoFollow, EnsureParentMakesSharedFoldersWhateverTheUmask) {
  const mode_t old = ::umask(077);
  CheckpointRoots roots({(dir_ / "root").string()});
  Status s = EnsureCheckpointParent(roots, {"shared_fs", (dir_ / "root/team").string(), "runs/1"});
  ::umask(old);
  ASSERT_TRUE(s.ok()) << s.message();
  for (const char* p : {"root", "root/team", "root/team/runs", "root/team/runs/1"}) {
    struct stat st {};
    ASSERT_EQ(::lstat((dir_ / p).c_str(), &st), 0) << p;
    EXPECT_EQ(st.st_mode & 07777, kSharedCheckpointFolderMode) << p;
  }
}

}  // namespace
}  // namespace ring
