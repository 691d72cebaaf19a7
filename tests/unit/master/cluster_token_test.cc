// The master's cluster token file: made private at first start, read back
// the same afterwards, refused when others may read it or it holds no token.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "master/auth/cluster_token.h"

namespace ring {
namespace {

namespace fs = std::filesystem;

class ClusterTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ring-token-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ClusterTokenTest, IsMadePrivateAtFirstStartAndReadBackAfter) {
  const std::string path = dir_ + "/cluster-token";
  auto made = LoadOrCreateClusterToken(path);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->size(), 64u);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  auto again = LoadOrCreateClusterToken(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *made);
  EXPECT_NE(*LoadOrCreateClusterToken(dir_ + "/other"), *made);  // every cluster its own
}

TEST_F(ClusterTokenTest, RefusesAFileOthersMayReadAndOneWithoutAToken) {
  const std::string path = dir_ + "/cluster-token";
  std::ofstream(path) << "an-operator-chosen-token-0123456789\n";
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  auto shared = LoadOrCreateClusterToken(path);
  EXPECT_EQ(shared.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(shared.status().message().find("chmod 600 " + path), std::string::npos)
      << shared.status().ToString();

  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(*LoadOrCreateClusterToken(path), "an-operator-chosen-token-0123456789");

  std::ofstream(path, std::ios::trunc) << "  \n";
  auto empty = LoadOrCreateClusterToken(path);
  EXPECT_EQ(empty.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("is empty"), std::string::npos) << empty.status().ToString();
}

TEST_F(ClusterTokenTest, RotationWritesANewPrivateTokenInPlace) {
  const std::string path = dir_ + "/cluster-token";
  const std::string first = *LoadOrCreateClusterToken(path);
  auto rotated = RotateClusterToken(path);
  ASSERT_TRUE(rotated.ok()) << rotated.status().ToString();
  EXPECT_NE(*rotated, first);
  EXPECT_EQ(rotated->size(), 64u);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_EQ(*LoadOrCreateClusterToken(path), *rotated);
  EXPECT_FALSE(RotateClusterToken(dir_ + "/missing/cluster-token").ok());
}

}  // namespace
}  // namespace ring
