// The web UI's files: content types, immutable caching of hashed assets,
// revalidated index.html, the fallback to index.html for client-side routes
// only, and no way out of the directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "master/http/static_files.h"

namespace ring {
namespace {

namespace fs = std::filesystem;

class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("webui-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "assets");
    std::ofstream(dir_ / "index.html") << "<!doctype html><div id=root></div>";
    std::ofstream(dir_ / "assets" / "index-3f2a1b.js") << "console.log(1)";
    std::ofstream(dir_ / "favicon.svg") << "<svg/>";
    std::ofstream(dir_.parent_path() / ("secret-" + std::to_string(::getpid()))) << "secret";
  }
  void TearDown() override {
    fs::remove_all(dir_);
    fs::remove(dir_.parent_path() / ("secret-" + std::to_string(::getpid())));
  }
  fs::path dir_;
};

TEST_F(StaticFilesTest, HashedAssetsAreImmutable) {
  StaticFiles files(dir_.string());
  auto r = files.Serve("/assets/index-3f2a1b.js");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "console.log(1)");
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(r.Header("Cache-Control"), "public, max-age=31536000, immutable");
}

TEST_F(StaticFilesTest, ThePageAndOtherFilesAreRevalidated) {
  StaticFiles files(dir_.string());
  for (const char* path : {"/", "/index.html"}) {
    auto r = files.Serve(path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
    EXPECT_EQ(r.Header("Cache-Control"), "no-cache");
  }
  auto svg = files.Serve("/favicon.svg");
  EXPECT_EQ(svg.content_type, "image/svg+xml");
  EXPECT_EQ(svg.Header("Cache-Control"), "no-cache");
}

TEST_F(StaticFilesTest, ClientRoutesFallBackToThePage) {
  StaticFiles files(dir_.string());
  for (const char* path : {"/experiments", "/experiments/12", "/trials/3", "/cluster"}) {
    auto r = files.Serve(path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body, "<!doctype html><div id=root></div>") << path;
    EXPECT_EQ(r.Header("Cache-Control"), "no-cache");
  }
}

TEST_F(StaticFilesTest, MissingFilesAre404NotThePage) {
  StaticFiles files(dir_.string());
  for (const char* path : {"/assets/index-old.js", "/assets/gone", "/robots.txt", "/x/y.png"}) {
    auto r = files.Serve(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.content_type, "application/json");
  }
}

TEST_F(StaticFilesTest, NothingOutsideTheDirectory) {
  StaticFiles files(dir_.string());
  auto r = files.Serve("/../secret-" + std::to_string(::getpid()));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body.find("secret\""), std::string::npos);
}

TEST(StaticFilesNotBuiltTest, SaysHowToGetIt) {
  auto none = StaticFiles("").Serve("/");
  EXPECT_EQ(none.status, 404);
  auto missing = StaticFiles("/nonexistent-webui-dir").Serve("/");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("deploy/build.sh"), std::string::npos);
}

}  // namespace
}  // namespace ring
