// `ring experiment create` against an in-test HTTP server: the POST body
// carries the config and a base64 tar.gz of the model folder without the
// files .ringignore names; size limits and server errors are reported.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/run_cli.h"
#include "tests/support/fake_http_server.h"

namespace ring::cli {
namespace {

namespace fs = std::filesystem;
using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

std::string DecodeBase64(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v = value(c);
    if (v < 0) continue;  // '=' padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

// Regular files of a tar.gz held in memory: path → content.
std::map<std::string, std::string> ReadTarGz(const std::string& data) {
  std::map<std::string, std::string> files;
  archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_all(a);
  EXPECT_EQ(archive_read_open_memory(a, data.data(), data.size()), ARCHIVE_OK) << archive_error_string(a);
  archive_entry* entry;
  while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
    std::string path = archive_entry_pathname(entry);
    if (path.rfind("./", 0) == 0) path = path.substr(2);
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    std::string content(static_cast<size_t>(archive_entry_size(entry)), '\0');
    if (!content.empty()) archive_read_data(a, content.data(), content.size());
    files[path] = content;
  }
  archive_read_free(a);
  return files;
}

void WriteFile(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

class CliCreateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("RING_CLI_POLL_MS", "5", 1);
    ::unsetenv("RING_MASTER");
    ::unsetenv("RING_MAX_MODEL_SIZE");
    root_ = fs::path(::testing::TempDir()) / ("cli_create_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    model_ = root_ / "model";
    WriteFile(model_ / "train.py", "print('hi')\n");
    WriteFile(model_ / "sub" / "helper.txt", "helper");
    WriteFile(model_ / "weights.bin", std::string(5000, 'w'));
    WriteFile(model_ / "secret.txt", "do not upload");
    WriteFile(model_ / ".ringignore", "# big and private files\n*.bin\nsecret.txt\n");
    config_ = root_ / "experiment.yaml";
    config_text_ = "name: quadratic\nentrypoint: sh run.sh\n";
    WriteFile(config_, config_text_);
  }
  void TearDown() override { fs::remove_all(root_); }

  static std::pair<int, std::pair<std::string, std::string>> Run(std::vector<std::string> args) {
    std::ostringstream out, err;
    int code = RunCli(std::move(args), out, err);
    return {code, {out.str(), err.str()}};
  }

  fs::path root_, model_, config_;
  std::string config_text_;
};

TEST_F(CliCreateTest, PostsConfigAndPackedModelWithoutIgnoredFiles) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{201, R"({"id":42})"}; });
  auto [code, output] = Run({"-m", server.url(), "experiment", "create", config_.string(), model_.string()});
  ASSERT_EQ(code, 0) << output.second;
  EXPECT_EQ(output.first, "Created experiment 42\n");
  EXPECT_EQ(output.second, "");  // no progress bar: stderr is not a terminal here

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/api/v1/experiments");
  auto body = nlohmann::json::parse(requests[0].body);
  EXPECT_EQ(body["config"], config_text_);
  EXPECT_EQ(body["activate"], true);
  auto files = ReadTarGz(DecodeBase64(body["model_definition"].get<std::string>()));
  EXPECT_EQ(files["train.py"], "print('hi')\n");
  EXPECT_EQ(files["sub/helper.txt"], "helper");
  EXPECT_EQ(files.count("weights.bin"), 0u);
  EXPECT_EQ(files.count("secret.txt"), 0u);
}

TEST_F(CliCreateTest, PausedCreatesWithoutActivating) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{201, R"({"id":7})"}; });
  auto [code, output] = Run(
      {"-m", server.url(), "--json", "experiment", "create", config_.string(), model_.string(), "--paused"});
  ASSERT_EQ(code, 0) << output.second;
  EXPECT_EQ(nlohmann::json::parse(output.first)["id"], 7);
  EXPECT_EQ(nlohmann::json::parse(server.requests().at(0).body)["activate"], false);
}

TEST_F(CliCreateTest, InvalidConfigIsReportedOnOneLine) {
  FakeHttpServer server([](const FakeRequest&) {
    return FakeResponse{
        400, R"({"error":{"code":"invalid_config",)"
             R"("message":"experiment.yaml:14: searcher.max_trials must be a positive integer"}})"};
  });
  auto [code, output] = Run({"-m", server.url(), "experiment", "create", config_.string(), model_.string()});
  EXPECT_EQ(code, 1);
  EXPECT_EQ(output.second,
            "ring: error: experiment.yaml:14: searcher.max_trials must be a positive integer\n");
}

TEST_F(CliCreateTest, AConfigThatIsNotUtf8IsRefusedBeforeUploading) {
  WriteFile(config_, "name: caf\xe9\nentrypoint: sh run.sh\n");  // Latin-1
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{201, R"({"id":1})"}; });
  auto [code, output] = Run({"-m", server.url(), "experiment", "create", config_.string(), model_.string()});
  EXPECT_EQ(code, 1);
  EXPECT_EQ(output.second,
            "ring: error: " + config_.string() + " is not UTF-8 text; save it as UTF-8 and try again\n");
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(CliCreateTest, RefusesModelFoldersOverTheLimitBeforeUploading) {
  WriteFile(model_ / "data.csv", std::string(4000, 'd'));  // not ignored
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{201, R"({"id":1})"}; });
  auto [code, output] = Run({"-m", server.url(), "experiment", "create", config_.string(), model_.string(),
                             "--max-model-size", "1K"});
  EXPECT_EQ(code, 1);
  EXPECT_EQ(output.second.rfind("ring: error: cannot pack the model directory", 0), 0u) << output.second;
  EXPECT_NE(output.second.find(".ringignore"), std::string::npos) << output.second;
  EXPECT_TRUE(server.requests().empty());

  ::setenv("RING_MAX_MODEL_SIZE", "1K", 1);  // the same limit from the environment
  auto [env_code, env_output] =
      Run({"-m", server.url(), "experiment", "create", config_.string(), model_.string()});
  EXPECT_EQ(env_code, 1) << env_output.second;
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(CliCreateTest, FollowWaitsForTheEnd) {
  FakeHttpServer server([](const FakeRequest& req) {
    if (req.method == "POST") return FakeResponse{201, R"({"id":3})"};
    if (req.target == "/api/v1/experiments/3")
      return FakeResponse{200, R"({"id":3,"name":"q","state":"CANCELED"})"};
    return FakeResponse{200, R"({"trials":[],"total":0})"};
  });
  auto [code, output] =
      Run({"-m", server.url(), "experiment", "create", config_.string(), model_.string(), "--follow"});
  EXPECT_EQ(code, 1);  // ended, but not COMPLETED
  EXPECT_NE(output.first.find("Created experiment 3\nExperiment 3 (q): CANCELED"), std::string::npos)
      << output.first;
}

TEST_F(CliCreateTest, UnreachableMasterExitsThree) {
  const ring::testing::HeldPort closed;
  std::string url = "http://127.0.0.1:" + std::to_string(closed.port());
  auto [code, output] = Run({"-m", url, "experiment", "create", config_.string(), model_.string()});
  EXPECT_EQ(code, 3);
  EXPECT_NE(output.second.find("cannot reach the master"), std::string::npos) << output.second;
}

}  // namespace
}  // namespace ring::cli
