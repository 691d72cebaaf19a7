// `ring checkpoint list` and `ring checkpoint download` against an in-test
// master: the table, paging, --json, errors and exit codes, and a download
// unpacked byte for byte.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/run_cli.h"
#include "common/archive.h"
#include "tests/support/fake_http_server.h"
#include "tests/unit/cli/cli_result.h"

namespace ring::cli {
namespace {

namespace fs = std::filesystem;
using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

nlohmann::json Checkpoint(const std::string& uuid, int64_t trial, int64_t batches, nlohmann::json metric) {
  return {{"uuid", uuid},
          {"trial_id", trial},
          {"experiment_id", 7},
          {"allocation_id", std::to_string(trial) + ".0"},
          {"batches", batches},
          {"state", "ACTIVE"},
          {"storage", {{"type", "shared_fs"}, {"host_path", "/ck"}}},
          {"resources",
           {{{"path", "model.bin"}, {"size", 1024}, {"sha256", "aa"}},
            {{"path", "loop.txt"}, {"size", 512}, {"sha256", "bb"}}}},
          {"metadata", nlohmann::json::object()},
          {"created_at", "2024-05-01T10:00:00Z"},
          {"validation_metric", metric}};
}

class CliCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("RING_MASTER");
    dir_ = fs::temp_directory_path() / ("cli-ckpt-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CliCheckpointTest, ListPrintsATableOfEveryPage) {
  const nlohmann::json all = {Checkpoint("c0ffee00-0000-4000-8000-000000000001", 3, 100, 0.25),
                              Checkpoint("c0ffee00-0000-4000-8000-000000000002", 3, 200, nullptr),
                              Checkpoint("c0ffee00-0000-4000-8000-000000000003", 4, 100, 0.125)};
  FakeHttpServer master([&](const FakeRequest& req) {
    const std::string prefix = "/api/v1/experiments/7/checkpoints?limit=500&offset=";
    if (req.target.rfind(prefix, 0) != 0) return FakeResponse{404, "{}"};
    // A master that pages by two, whatever the CLI asks for.
    size_t offset = std::stoul(req.target.substr(prefix.size()));
    nlohmann::json page = nlohmann::json::array();
    for (size_t i = offset; i < all.size() && i < offset + 2; ++i) page.push_back(all[i]);
    return FakeResponse{200, nlohmann::json{{"checkpoints", page}, {"total", all.size()}}.dump()};
  });
  auto r = RunRing({"-m", master.url(), "checkpoint", "list", "7"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(master.requests().size(), 2u);
  std::istringstream lines(r.out);
  std::string header, row1, row2, row3;
  std::getline(lines, header);
  for (const char* column : {"UUID", "TRIAL", "BATCHES", "STATE", "SIZE", "VALIDATION METRIC", "CREATED"})
    EXPECT_NE(header.find(column), std::string::npos) << header;
  std::getline(lines, row1);
  std::getline(lines, row2);
  std::getline(lines, row3);
  EXPECT_NE(row1.find("c0ffee00-0000-4000-8000-000000000001"), std::string::npos) << r.out;
  EXPECT_NE(row1.find("1.5 KiB"), std::string::npos) << r.out;
  EXPECT_NE(row1.find("0.25"), std::string::npos) << r.out;
  EXPECT_NE(row1.find("ACTIVE"), std::string::npos) << r.out;
  EXPECT_NE(row1.find("2024-05-01T10:00:00Z"), std::string::npos) << r.out;
  EXPECT_NE(row2.find("200"), std::string::npos) << r.out;
  EXPECT_NE(row2.find(" - "), std::string::npos) << "no validation metric shows as -: " << r.out;
  EXPECT_NE(row3.find("c0ffee00-0000-4000-8000-000000000003"), std::string::npos) << r.out;

  auto json = RunRing({"-m", master.url(), "--json", "checkpoint", "list", "7"});
  ASSERT_EQ(json.code, 0) << json.err;
  auto parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["total"], 3);
  EXPECT_EQ(parsed["checkpoints"], all);
}

TEST_F(CliCheckpointTest, ListSaysWhenThereAreNoneAndFailsOnUnknownExperiments) {
  FakeHttpServer master([](const FakeRequest& req) {
    if (req.target.rfind("/api/v1/experiments/7/", 0) == 0)
      return FakeResponse{200, R"({"checkpoints":[],"total":0})"};
    return FakeResponse{404, R"({"error":{"code":"not_found","message":"experiment 8 not found"}})"};
  });
  auto none = RunRing({"-m", master.url(), "checkpoint", "list", "7"});
  EXPECT_EQ(none.code, 0);
  EXPECT_NE(none.out.find("Experiment 7 has no checkpoints"), std::string::npos) << none.out;
  auto unknown = RunRing({"-m", master.url(), "checkpoint", "list", "8"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("experiment 8 not found"), std::string::npos) << unknown.err;
  EXPECT_EQ(RunRing({"-m", master.url(), "checkpoint", "list"}).code, 2);
  EXPECT_EQ(RunRing({"-m", master.url(), "checkpoint", "list", "x"}).code, 2);
}

TEST_F(CliCheckpointTest, DownloadUnpacksTheCheckpointIntoDir) {
  const fs::path source = dir_ / "source";
  fs::create_directories(source / "sub");
  std::string model(70000, '\0');
  for (size_t i = 0; i < model.size(); ++i) model[i] = static_cast<char>(i * 131 % 251);
  std::ofstream(source / "model.bin", std::ios::binary) << model;
  std::ofstream(source / "sub" / "loop.txt") << "200 0 0 4 200\n";
  auto tar = PackDirectory(source.string());
  ASSERT_TRUE(tar.ok()) << tar.status().message();
  const std::string uuid = "c0ffee00-0000-4000-8000-000000000001";
  FakeHttpServer master([&](const FakeRequest& req) {
    if (req.method == "GET" && req.target == "/api/v1/checkpoints/" + uuid + "/download")
      return FakeResponse{200, *tar};
    return FakeResponse{404, R"({"error":{"code":"not_found","message":"no such checkpoint"}})"};
  });
  const fs::path dest = dir_ / "out" / "ck";
  auto r = RunRing({"-m", master.url(), "checkpoint", "download", uuid, dest.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("downloaded to " + fs::absolute(dest).lexically_normal().string()), std::string::npos)
      << r.out;
  std::ifstream in(dest / "model.bin", std::ios::binary);
  std::stringstream got;
  got << in.rdbuf();
  EXPECT_EQ(got.str(), model);
  std::ifstream loop(dest / "sub" / "loop.txt");
  std::string line;
  std::getline(loop, line);
  EXPECT_EQ(line, "200 0 0 4 200");
}

TEST_F(CliCheckpointTest, DownloadErrorsSayWhatWentWrong) {
  FakeHttpServer master([](const FakeRequest& req) {
    if (req.target.find("deleted") != std::string::npos)
      return FakeResponse{409, R"({"error":{"code":"conflict","message":"checkpoint was deleted"}})"};
    if (req.target.find("garbage") != std::string::npos) return FakeResponse{200, "not a tar.gz"};
    return FakeResponse{404, R"({"error":{"code":"not_found","message":"no such checkpoint"}})"};
  });
  auto unknown = RunRing({"-m", master.url(), "checkpoint", "download", "nope", (dir_ / "a").string()});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("checkpoint nope not found"), std::string::npos) << unknown.err;
  auto deleted = RunRing({"-m", master.url(), "checkpoint", "download", "deleted", (dir_ / "b").string()});
  EXPECT_EQ(deleted.code, 1);
  EXPECT_NE(deleted.err.find("checkpoint was deleted"), std::string::npos) << deleted.err;
  auto garbage = RunRing({"-m", master.url(), "checkpoint", "download", "garbage", (dir_ / "c").string()});
  EXPECT_EQ(garbage.code, 1);
  EXPECT_NE(garbage.err.find("cannot unpack checkpoint garbage"), std::string::npos) << garbage.err;
  const ring::testing::HeldPort closed_port;
  const std::string closed = "http://127.0.0.1:" + std::to_string(closed_port.port());
  EXPECT_EQ(RunRing({"-m", closed, "checkpoint", "download", "x", (dir_ / "d").string()}).code, 3);
  EXPECT_EQ(RunRing({"-m", master.url(), "checkpoint", "download", "x"}).code, 2);
}

}  // namespace
}  // namespace ring::cli
