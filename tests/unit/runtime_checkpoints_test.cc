// Checkpoints and preemption of the trial runtime: atomic writes, SHA-256
// verification on restore, registration with retries and fencing, and the
// preemption long poll — locally and against an in-test master.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ring/trial/trial.h"
#include "unit/cli_fake_master.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;
using ring::testing::FakeHttpServer;
using ring::testing::FakeResponse;

class RuntimeCheckpointsTest : public ::testing::Test {
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

  Context Cluster(const std::string& url, const std::string& resume = "") {
    Environment env = {{"RING_MASTER_URL", url},
                       {"RING_ALLOCATION_ID", "3.0"},
                       {"RING_ALLOCATION_TOKEN", "tok"},
                       {"RING_TRIAL_ID", "3"},
                       {"RING_MAX_LENGTH_BATCHES", "10"},
                       {"RING_API_RETRY_SECONDS", "5"},
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

  fs::path root_;
  std::ostringstream quiet_;
};

TEST_F(RuntimeCheckpointsTest, SaveThenRestoreVerifiesEveryFile) {
  std::string uuid;
  {
    auto ctx = Local();
    uuid =
        ctx.checkpoints().save(40, [](const fs::path& dir) { WriteState(dir, "weights"); }, {{"note", "hi"}});
  }
  EXPECT_TRUE(fs::exists(root_ / uuid / "state.bin"));
  for (const auto& e : fs::directory_iterator(root_))
    EXPECT_NE(e.path().filename().string().rfind(".tmp-", 0), 0u) << "a temporary directory was left";
  auto ctx = Local({"--resume", (root_ / uuid).string()});
  auto latest = ctx.checkpoints().latest();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->uuid, uuid);
  EXPECT_EQ(latest->batches, 40);
  EXPECT_EQ(latest->metadata["note"], "hi");
  ASSERT_EQ(latest->files.size(), 2u);
  EXPECT_EQ(latest->files[0].path, "state.bin");
  EXPECT_EQ(latest->files[0].size, 7u);
  EXPECT_EQ(latest->files[0].sha256, Sha256File(root_ / uuid / "state.bin"));
  EXPECT_EQ(latest->files[1].path, "sub/extra.txt");
}

TEST_F(RuntimeCheckpointsTest, AWriterThatThrowsLeavesNothing) {
  auto ctx = Local();
  EXPECT_THROW(ctx.checkpoints().save(1,
                                      [](const fs::path& dir) {
                                        WriteState(dir, "half");
                                        throw std::runtime_error("disk full");
                                      }),
               std::runtime_error);
  EXPECT_TRUE(!fs::exists(root_) || fs::is_empty(root_));
  EXPECT_FALSE(ctx.checkpoints().latest().has_value());
}

TEST_F(RuntimeCheckpointsTest, CorruptedOrMissingFilesAreRefusedNamingTheFile) {
  std::string uuid;
  {
    auto ctx = Local();
    uuid = ctx.checkpoints().save(5, [](const fs::path& dir) { WriteState(dir, "abcdef"); });
  }
  {
    std::fstream f(root_ / uuid / "state.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2);
    f.put('X');
  }
  auto ctx = Local({"--resume", (root_ / uuid).string()});
  try {
    ctx.checkpoints().latest();
    FAIL() << "a corrupted checkpoint was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("state.bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sha256"), std::string::npos) << e.what();
  }
  fs::remove(root_ / uuid / "sub" / "extra.txt");
  std::fstream(root_ / uuid / "state.bin", std::ios::in | std::ios::out | std::ios::binary).seekp(2).put('c');
  EXPECT_THROW(ctx.checkpoints().latest(), CheckpointError);
}

TEST_F(RuntimeCheckpointsTest, DueFollowsTheMinimumPeriod) {
  auto ctx = Local();  // no min_checkpoint_period in its environment: never due
  EXPECT_FALSE(ctx.checkpoints().due(1000));
  Checkpoints with_period(std::make_unique<SharedFsStorage>(root_), nullptr, {}, 100);
  EXPECT_FALSE(with_period.due(99));
  EXPECT_TRUE(with_period.due(100));
  with_period.save(150, [](const fs::path& dir) { WriteState(dir, "s"); });
  EXPECT_FALSE(with_period.due(200));
  EXPECT_TRUE(with_period.due(250));
}

TEST_F(RuntimeCheckpointsTest, RegistrationIsRetriedThenVerifiedAgainstTheMaster) {
  std::atomic<int> posts{0};
  nlohmann::json registered;
  FakeHttpServer master([&](const ring::testing::FakeRequest& req) {
    if (req.method == "POST" && req.target == "/api/v1/allocations/3.0/checkpoints") {
      if (++posts <= 2) return FakeResponse{503, R"({"error":{"code":"unavailable","message":"busy"}})"};
      registered = nlohmann::json::parse(req.body);
      return FakeResponse{201, R"({"uuid":"x"})"};
    }
    if (req.method == "GET" && req.target.rfind("/api/v1/allocations/3.0/checkpoints/", 0) == 0)
      return FakeResponse{200, registered.dump()};
    return FakeResponse{200, R"({"preempt":false})"};
  });
  std::string uuid;
  {
    auto ctx = Cluster(master.url());
    uuid = ctx.checkpoints().save(7, [](const fs::path& dir) { WriteState(dir, "cluster"); });
  }
  EXPECT_EQ(posts.load(), 3);
  EXPECT_EQ(registered["uuid"], uuid);
  EXPECT_EQ(registered["batches"], 7);
  EXPECT_EQ(registered["resources"].size(), 2u);
  EXPECT_TRUE(fs::exists(root_ / "exp" / uuid / "state.bin"));
  auto ctx = Cluster(master.url(), (root_ / "exp" / uuid).string());
  auto latest = ctx.checkpoints().latest();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->batches, 7);
}

TEST_F(RuntimeCheckpointsTest, AFencedOutAllocationCannotRegister) {
  FakeHttpServer master([](const ring::testing::FakeRequest&) {
    return FakeResponse{409, R"({"error":{"code":"conflict","message":"allocation 3.0 has ended"}})"};
  });
  auto ctx = Cluster(master.url());
  try {
    ctx.checkpoints().save(1, [](const fs::path& dir) { WriteState(dir, "late"); });
    FAIL() << "registration of an ended allocation succeeded";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("409"), std::string::npos) << e.what();
  }
}

TEST_F(RuntimeCheckpointsTest, PreemptionIsSeenAndAcknowledged) {
  std::atomic<bool> asked{false};
  std::atomic<int> acks{0};
  FakeHttpServer master([&](const ring::testing::FakeRequest& req) {
    if (req.target.rfind("/api/v1/allocations/3.0/preemption?", 0) == 0)
      return FakeResponse{200, asked ? R"({"preempt":true})" : R"({"preempt":false})"};
    if (req.target == "/api/v1/allocations/3.0/preemption/ack") {
      ++acks;
      return FakeResponse{200, "{}"};
    }
    return FakeResponse{200, "{}"};
  });
  auto ctx = Cluster(master.url());
  EXPECT_FALSE(ctx.preempt().should_preempt());
  asked = true;
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    seen = ctx.preempt().should_preempt();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(seen);
  ctx.preempt().acknowledge();
  ctx.preempt().acknowledge();  // once is enough
  EXPECT_EQ(acks.load(), 1);
}

}  // namespace
}  // namespace ring::trial
