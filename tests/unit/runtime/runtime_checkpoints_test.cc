// Checkpoints of the trial runtime in local mode: atomic writes, the
// manifest, SHA-256 verification on restore (naming the file and both
// checksums), the minimum period and the storage configuration.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "tests/unit/runtime/runtime_checkpoint_fixture.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;
using checkpoint_testing::ReadFile;
using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

class RuntimeCheckpointsTest : public checkpoint_testing::CheckpointTest {};

TEST_F(RuntimeCheckpointsTest, SaveThenRestoreVerifiesEveryFile) {
  std::string uuid;
  {
    auto ctx = Local();
    uuid =
        ctx.checkpoints().save(40, [](const fs::path& dir) { WriteState(dir, "weights"); }, {{"note", "hi"}});
  }
  EXPECT_EQ(uuid.size(), 36u);
  EXPECT_EQ(uuid[14], '4') << "not a version 4 uuid: " << uuid;
  EXPECT_EQ(Entries(root_), std::vector<std::string>{uuid}) << "a temporary directory was left";
  auto manifest = nlohmann::json::parse(ReadFile(root_ / uuid / kCheckpointManifest));
  EXPECT_EQ(manifest["batches"], 40);
  EXPECT_EQ(manifest["resources"].size(), 2u);

  auto ctx = Local({"--resume", (root_ / uuid).string()});
  auto latest = ctx.checkpoints().latest_verified();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->uuid, uuid);
  EXPECT_EQ(latest->path, root_ / uuid);
  EXPECT_EQ(latest->batches, 40);
  EXPECT_EQ(latest->metadata["note"], "hi");
  ASSERT_EQ(latest->files.size(), 2u);
  EXPECT_EQ(latest->files[0].path, "state.bin");
  EXPECT_EQ(latest->files[0].size, 7u);
  EXPECT_EQ(latest->files[0].sha256,
            "9a129038d9a00aed0cf6a7ea059ca50a813449061ab87848cf1a13eafdf33b2c");  // SHA-256("weights")
  EXPECT_EQ(latest->files[1].path, "sub/extra.txt");
  EXPECT_EQ(ctx.checkpoints().restore(*latest).batches, 40);
}

TEST_F(RuntimeCheckpointsTest, Sha256MatchesKnownDigests) {
  fs::create_directories(root_);
  std::ofstream(root_ / "empty", std::ios::binary).close();
  std::ofstream(root_ / "abc", std::ios::binary) << "abc";
  EXPECT_EQ(Sha256File(root_ / "empty"), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256File(root_ / "abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_THROW(Sha256File(root_ / "missing"), CheckpointError);
}

TEST_F(RuntimeCheckpointsTest, AWriterThatThrowsLeavesNothing) {
  auto ctx = Local();
  EXPECT_THROW(ctx.checkpoints().save(1,
                                      [](const fs::path& dir) {
                                        WriteState(dir, "half");
                                        throw std::runtime_error("disk full");
                                      }),
               std::runtime_error);
  EXPECT_TRUE(Entries(root_).empty());
  EXPECT_FALSE(ctx.checkpoints().latest().has_value());
}

TEST_F(RuntimeCheckpointsTest, CorruptedOrMissingFilesAreRefusedNamingTheFileAndBothChecksums) {
  std::string uuid;
  {
    auto ctx = Local();
    uuid = ctx.checkpoints().save(5, [](const fs::path& dir) { WriteState(dir, "abcdef"); });
  }
  const std::string good = Sha256File(root_ / uuid / "state.bin");
  {
    std::fstream f(root_ / uuid / "state.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2);
    f.put('X');
  }
  const std::string bad = Sha256File(root_ / uuid / "state.bin");
  auto ctx = Local({"--resume", (root_ / uuid).string()});
  auto latest = ctx.checkpoints().latest();  // reads the registration only
  ASSERT_TRUE(latest.has_value());
  try {
    ctx.checkpoints().restore(*latest);
    FAIL() << "a corrupted checkpoint was accepted";
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("state.bin"), std::string::npos) << what;
    EXPECT_NE(what.find(good), std::string::npos) << what;
    EXPECT_NE(what.find(bad), std::string::npos) << what;
  }
  EXPECT_THROW(ctx.checkpoints().latest_verified(), CheckpointError);
  std::fstream(root_ / uuid / "state.bin", std::ios::in | std::ios::out | std::ios::binary).seekp(2).put('c');
  EXPECT_NO_THROW(ctx.checkpoints().latest_verified());
  fs::remove(root_ / uuid / "sub" / "extra.txt");
  try {
    ctx.checkpoints().latest_verified();
    FAIL() << "a checkpoint with a missing file was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("sub/extra.txt is missing"), std::string::npos) << e.what();
  }
  std::ofstream(root_ / uuid / "sub" / "extra.txt") << "extra!";  // other size
  EXPECT_THROW(ctx.checkpoints().latest_verified(), CheckpointError);
}

TEST_F(RuntimeCheckpointsTest, WritersMayNotLeaveLinksOrTheManifest) {
  auto ctx = Local();
  EXPECT_THROW(ctx.checkpoints().save(1,
                                      [](const fs::path& dir) {
                                        WriteState(dir, "x");
                                        fs::create_symlink("/etc/passwd", dir / "link");
                                      }),
               CheckpointError);
  EXPECT_THROW(ctx.checkpoints().save(
                   1, [](const fs::path& dir) { std::ofstream(dir / kCheckpointManifest) << "{}"; }),
               CheckpointError);
  EXPECT_TRUE(Entries(root_).empty());
}

TEST_F(RuntimeCheckpointsTest, ARegistrationNamingFilesOutsideTheCheckpointIsRefused) {
  fs::create_directories(root_ / "c1");
  std::ofstream(root_ / "c1" / kCheckpointManifest)
      << R"({"batches":1,"resources":[{"path":"../secret","size":1,"sha256":"00"}]})";
  auto ctx = Local({"--resume", (root_ / "c1").string()});
  EXPECT_THROW(ctx.checkpoints().latest(), CheckpointError);
}

TEST_F(RuntimeCheckpointsTest, DueFollowsTheMinimumPeriod) {
  auto ctx = Local();  // no min_checkpoint_period in its environment: never due
  EXPECT_FALSE(ctx.checkpoints().due(1000));
  Checkpoints with_period(std::make_unique<SharedFsStorage>(root_), nullptr, {}, 100);
  EXPECT_FALSE(with_period.due(99));
  EXPECT_TRUE(with_period.due(100));
  const std::string uuid = with_period.save(150, [](const fs::path& dir) { WriteState(dir, "s"); });
  EXPECT_FALSE(with_period.due(200));
  EXPECT_TRUE(with_period.due(250));
  // A resumed run counts from the checkpoint it resumed from.
  Checkpoints resumed(std::make_unique<SharedFsStorage>(root_), nullptr, root_ / uuid, 100);
  ASSERT_TRUE(resumed.latest_verified().has_value());
  EXPECT_FALSE(resumed.due(249));
  EXPECT_TRUE(resumed.due(250));
}

TEST_F(RuntimeCheckpointsTest, StorageComesFromTheEnvironmentAndBadOnesAreRefused) {
  auto storage =
      MakeCheckpointStorage({{"type", "shared_fs"}, {"host_path", "/data/ck"}, {"storage_path", ""}});
  EXPECT_EQ(dynamic_cast<SharedFsStorage&>(*storage).root(), fs::path("/data/ck"));
  storage = MakeCheckpointStorage({{"host_path", "/data/ck"}, {"storage_path", "a/b"}});
  EXPECT_EQ(dynamic_cast<SharedFsStorage&>(*storage).root(), fs::path("/data/ck/a/b"));
  EXPECT_THROW(MakeCheckpointStorage({{"type", "s3"}, {"bucket", "b"}}), ConfigError);
  EXPECT_THROW(MakeCheckpointStorage({{"type", "shared_fs"}}), ConfigError);
  EXPECT_THROW(MakeCheckpointStorage({{"host_path", "relative"}}), ConfigError);
  EXPECT_THROW(MakeCheckpointStorage({{"host_path", "/x"}, {"storage_path", "/abs"}}), ConfigError);
  EXPECT_THROW(MakeCheckpointStorage(nlohmann::json::array()), ConfigError);
  Environment env = {{"RING_MASTER_URL", "http://127.0.0.1:1"},
                     {"RING_ALLOCATION_ID", "3.0"},
                     {"RING_ALLOCATION_TOKEN", "tok"},
                     {"RING_CHECKPOINT_STORAGE", "not json"}};
  const char* argv[] = {"trial"};
  EXPECT_THROW(Context::from_environment(1, argv, env, Options()), ConfigError);
}

}  // namespace
}  // namespace ring::trial
