// Checkpoints of the trial runtime under an in-test master: nothing is
// registered unless complete (also when the process dies mid-write),
// registration is retried idempotently within the retry budget, a 409 fences
// the allocation out, and a restore trusts the master's record.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "tests/unit/runtime/issued_uuids.h"
#include "tests/unit/runtime/runtime_checkpoint_fixture.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;
using checkpoint_testing::ReadFile;
using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

class RuntimeCheckpointRegistrationTest : public checkpoint_testing::CheckpointTest {};

TEST_F(RuntimeCheckpointRegistrationTest, AWriterThatThrowsRegistersNothing) {
  RegistryMaster registry;
  FakeHttpServer master([&](const FakeRequest& req) { return registry.Handle(req); });
  auto ctx = Cluster(master.url());
  EXPECT_THROW(ctx.checkpoints().save(1,
                                      [](const fs::path& dir) {
                                        WriteState(dir, "half");
                                        throw std::runtime_error("disk full");
                                      }),
               std::runtime_error);
  EXPECT_EQ(registry.posts.load(), 0);
  EXPECT_TRUE(Entries(root_ / "exp").empty());
}

TEST_F(RuntimeCheckpointRegistrationTest, TheFinalDirectoryAppearsOnlyCompleteAndBeforeRegistration) {
  RegistryMaster registry;
  std::vector<std::string> problems;
  registry.before = [&](const FakeRequest& req) -> std::optional<FakeResponse> {
    if (req.method != "POST") return std::nullopt;
    // At registration the directory is in place, complete, and the temporary one is gone.
    auto body = nlohmann::json::parse(req.body);
    const fs::path dir = root_ / "exp" / body["uuid"].get<std::string>();
    if (Entries(root_ / "exp") != std::vector<std::string>{body["uuid"].get<std::string>()})
      problems.push_back("storage holds more than the final directory");
    for (const auto& f : body["resources"]) {
      const fs::path p = dir / f["path"].get<std::string>();
      if (!fs::exists(p) || fs::file_size(p) != f["size"].get<uint64_t>() ||
          Sha256File(p) != f["sha256"].get<std::string>())
        problems.push_back("file " + f["path"].get<std::string>() + " is not as registered");
    }
    if (!fs::exists(dir / kCheckpointManifest)) problems.push_back("no manifest");
    return std::nullopt;
  };
  FakeHttpServer master([&](const FakeRequest& req) { return registry.Handle(req); });
  auto ctx = Cluster(master.url());
  std::string seen_while_writing;
  const std::string uuid = ctx.checkpoints().save(12, [&](const fs::path& dir) {
    WriteState(dir, "abc");
    // While the writer runs, only the temporary directory exists.
    for (const auto& name : Entries(root_ / "exp")) seen_while_writing += name + " ";
    EXPECT_EQ(dir.filename().string().rfind(".tmp-", 0), 0u) << dir;
  });
  EXPECT_EQ(seen_while_writing, ".tmp-" + uuid + " ");
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(registry.posts.load(), 1);
  EXPECT_EQ(registry.records[uuid]["batches"], 12);
  EXPECT_EQ(registry.records[uuid]["resources"][0]["sha256"], Sha256File(root_ / "exp" / uuid / "state.bin"));
}

TEST_F(RuntimeCheckpointRegistrationTest,
       AProcessThatDiesWhileWritingLeavesOnlyAnUnregisteredTemporaryDirectory) {
  RegistryMaster registry;
  FakeHttpServer master([&](const FakeRequest& req) { return registry.Handle(req); });
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto ctx = Cluster(master.url());
    ctx.checkpoints().save(5, [](const fs::path& dir) {
      WriteState(dir, "half written");
      ::_exit(7);  // dies like kill -9 would: no cleanup
    });
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7);
  auto entries = Entries(root_ / "exp");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].rfind(".tmp-", 0), 0u) << entries[0];
  EXPECT_EQ(registry.posts.load(), 0);
  // Even when pointed at it, a run refuses to resume from it (it has no manifest).
  auto ctx = Local({"--resume", (root_ / "exp" / entries[0]).string()});
  EXPECT_THROW(ctx.checkpoints().latest_verified(), CheckpointError);
}

TEST_F(RuntimeCheckpointRegistrationTest, RegistrationIsRetriedWithTheSameBodyThenVerifiedAgainstTheMaster) {
  RegistryMaster registry;
  std::vector<std::string> bodies;
  registry.before = [&](const FakeRequest& req) -> std::optional<FakeResponse> {
    if (req.method != "POST") return std::nullopt;
    bodies.push_back(req.body);
    if (bodies.size() <= 3) return FakeResponse{503, R"({"error":{"code":"unavailable","message":"busy"}})"};
    if (bodies.size() == 4) {  // stored, but the answer is lost: the retry must be harmless
      auto body = nlohmann::json::parse(req.body);
      std::lock_guard lock(registry.mutex);
      registry.records[body["uuid"]] = body;
      return FakeResponse{502, "bad gateway"};
    }
    return std::nullopt;
  };
  FakeHttpServer master([&](const FakeRequest& req) { return registry.Handle(req); });
  std::string uuid;
  {
    auto ctx = Cluster(master.url());
    uuid = ctx.checkpoints().save(7, [](const fs::path& dir) { WriteState(dir, "cluster"); });
  }
  ASSERT_EQ(bodies.size(), 5u);
  for (const auto& b : bodies) EXPECT_EQ(b, bodies.front());
  EXPECT_EQ(registry.records.size(), 1u);
  EXPECT_EQ(registry.records[uuid]["batches"], 7);
  EXPECT_EQ(registry.records[uuid]["resources"].size(), 2u);
  for (const auto& req : master.requests()) EXPECT_EQ(req.headers.at("authorization"), "Bearer tok");

  auto ctx = Cluster(master.url(), (root_ / "exp" / uuid).string());
  auto latest = ctx.checkpoints().latest_verified();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->batches, 7);
  EXPECT_EQ(master.requests().back().target, "/api/v1/allocations/3.0/checkpoints/" + uuid);
}

TEST_F(RuntimeCheckpointRegistrationTest, RestoreUnderAMasterTrustsTheRegistrationNotTheManifest) {
  RegistryMaster registry;
  FakeHttpServer master([&](const FakeRequest& req) { return registry.Handle(req); });
  std::string uuid;
  {
    auto ctx = Cluster(master.url());
    uuid = ctx.checkpoints().save(9, [](const fs::path& dir) { WriteState(dir, "registered"); });
  }
  const std::string registered = Sha256File(root_ / "exp" / uuid / "state.bin");
  // Replace the file and forge the manifest to match: only the master's record is left to tell.
  const fs::path dir = root_ / "exp" / uuid;
  std::ofstream(dir / "state.bin", std::ios::binary | std::ios::trunc) << "forgedxxxx";
  auto manifest = nlohmann::json::parse(ReadFile(dir / kCheckpointManifest));
  manifest["resources"][0]["sha256"] = Sha256File(dir / "state.bin");
  std::ofstream(dir / kCheckpointManifest, std::ios::trunc) << manifest.dump();
  auto ctx = Cluster(master.url(), dir.string());
  try {
    ctx.checkpoints().latest_verified();
    FAIL() << "a file that differs from its registration was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("state.bin is corrupted: sha256 " + Sha256File(dir / "state.bin") +
                                         ", expected " + registered),
              std::string::npos)
        << e.what();
  }
}

TEST_F(RuntimeCheckpointRegistrationTest, RegistrationGivesUpAfterTheRetryBudgetAndKeepsTheFiles) {
  std::atomic<int> posts{0};
  FakeHttpServer master([&](const FakeRequest& req) {
    if (testing_uuids::IsPrepare(req.target)) return FakeResponse{201, testing_uuids::IssuedUuidBody()};
    if (req.method == "POST") ++posts;
    return FakeResponse{503, R"({"error":{"code":"unavailable","message":"restarting"}})"};
  });
  auto ctx = Cluster(master.url(), "", "1");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(ctx.checkpoints().save(3, [](const fs::path& dir) { WriteState(dir, "kept"); }),
               MasterUnreachableError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_GE(posts.load(), 2);
  // It may have been registered without the answer arriving, so it stays.
  auto entries = Entries(root_ / "exp");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_NE(entries[0].rfind(".tmp-", 0), 0u);
}

TEST_F(RuntimeCheckpointRegistrationTest, AFencedOutAllocationCannotRegisterAndItsFilesAreDropped) {
  std::atomic<int> posts{0};
  FakeHttpServer master([&](const FakeRequest&) {
    ++posts;
    return FakeResponse{409, R"({"error":{"code":"conflict","message":"allocation 3.0 has ended"}})"};
  });
  auto ctx = Cluster(master.url());
  try {
    ctx.checkpoints().save(1, [](const fs::path& dir) { WriteState(dir, "late"); });
    FAIL() << "registration of an ended allocation succeeded";
  } catch (const AllocationEndedError& e) {
    EXPECT_NE(std::string(e.what()).find("409"), std::string::npos) << e.what();
  }
  EXPECT_EQ(posts.load(), 1) << "a 409 must not be retried";
  EXPECT_TRUE(Entries(root_ / "exp").empty());
}

}  // namespace
}  // namespace ring::trial
