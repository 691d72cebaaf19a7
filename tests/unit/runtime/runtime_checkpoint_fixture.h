#pragma once
// Shared by the checkpoint tests of the trial runtime: a fixture with a
// private storage folder, contexts in local and cluster mode, and an in-test
// master that registers checkpoints and answers lookups with them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "ring/trial/trial.h"
#include "tests/support/fake_http_server.h"
#include "tests/unit/runtime/issued_uuids.h"

namespace ring::trial::checkpoint_testing {

namespace fs = std::filesystem;
using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

inline std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("runtime-ckpt-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  Context Local(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"trial", "--checkpoint-dir", root_.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    return Context::from_environment(static_cast<int>(argv.size()), argv.data(), {}, Options());
  }

  Context Cluster(const std::string& url, const std::string& resume = "", const std::string& retry = "5") {
    Environment env = {{"RING_MASTER_URL", url},
                       {"RING_ALLOCATION_ID", "3.0"},
                       {"RING_ALLOCATION_TOKEN", "tok"},
                       {"RING_TRIAL_ID", "3"},
                       {"RING_MAX_LENGTH_BATCHES", "10"},
                       {"RING_API_RETRY_SECONDS", retry},
                       {"RING_CHECKPOINT_STORAGE", R"({"type":"shared_fs","host_path":")" + root_.string() +
                                                       R"(","storage_path":"exp"})"}};
    if (!resume.empty()) env["RING_LATEST_CHECKPOINT"] = resume;
    const char* argv[] = {"trial"};
    return Context::from_environment(1, argv, env, Options());
  }

  ContextOptions Options() {
    ContextOptions o;
    o.local_out = &quiet_;
    o.diagnostics = &quiet_;
    return o;
  }

  static void WriteState(const fs::path& dir, const std::string& text) {
    fs::create_directories(dir / "sub");
    std::ofstream(dir / "state.bin", std::ios::binary) << text;
    std::ofstream(dir / "sub" / "extra.txt") << "extra";
  }

  // Names of the entries of `dir` (empty when it does not exist).
  static std::vector<std::string> Entries(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  // A master that registers checkpoints (201, then 200 for a repeat) and
  // answers lookups with what was registered.
  struct RegistryMaster {
    std::mutex mutex;
    std::map<std::string, nlohmann::json> records;
    std::atomic<int> posts{0};
    std::function<std::optional<FakeResponse>(const FakeRequest&)> before;  // injected answers
    FakeResponse Handle(const FakeRequest& req) {
      // Uuids are issued first: `before` sees registrations and lookups only.
      if (req.method == "POST" && testing_uuids::IsPrepare(req.target))
        return {201, testing_uuids::IssuedUuidBody()};
      if (before)
        if (auto r = before(req)) return *r;
      const std::string prefix = "/api/v1/allocations/3.0/checkpoints";
      if (req.method == "POST" && req.target == prefix) {
        ++posts;
        auto body = nlohmann::json::parse(req.body);
        std::lock_guard lock(mutex);
        const bool repeat = records.count(body["uuid"]) > 0;
        records[body["uuid"]] = body;
        return {repeat ? 200 : 201, nlohmann::json{{"uuid", body["uuid"]}}.dump()};
      }
      if (req.method == "GET" && req.target.rfind(prefix + "/", 0) == 0) {
        std::lock_guard lock(mutex);
        auto it = records.find(req.target.substr(prefix.size() + 1));
        if (it == records.end())
          return {404, R"({"error":{"code":"not_found","message":"no such checkpoint"}})"};
        return {200, it->second.dump()};
      }
      return {200, R"({"preempt":false})"};
    }
  };

  fs::path root_;
  std::ostringstream quiet_;
};

}  // namespace ring::trial::checkpoint_testing
