// Checkpoints written in the background (Checkpoints::save_async): the
// training thread only takes a snapshot and goes on; the checkpoint holds
// the snapshot bit for bit (the same files and checksums as a synchronous
// save of that state); at most one is in flight; a failed write is thrown
// by the next call and leaves nothing; a process that dies while one is
// being written leaves the previous checkpoint the latest registered; and
// acknowledging a preemption finishes the one in flight first.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

#include "tests/unit/runtime/runtime_checkpoint_fixture.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;
using checkpoint_testing::ReadFile;
using ring::testing::FakeHttpServer;

class AsyncCheckpointsTest : public checkpoint_testing::CheckpointTest {};

// A gate the background writer waits at until the test opens it.
class Gate {
 public:
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Pass() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// The state a checkpoint saves, copied by the snapshot.
Checkpoints::Snapshot SnapshotOf(const std::string& state, Gate* gate = nullptr) {
  return [&state, gate] {
    std::string copy = state;  // the training thread's only cost
    return Checkpoints::Writer([copy = std::move(copy), gate](const fs::path& dir) {
      if (gate) gate->Pass();
      std::ofstream(dir / "state.bin", std::ios::binary) << copy;
    });
  };
}

TEST_F(AsyncCheckpointsTest, TrainingGoesOnWhileTheSnapshotIsWrittenBitForBit) {
  auto ctx = Local();
  std::string state(1 << 20, 'a');
  for (size_t i = 0; i < state.size(); ++i) state[i] = static_cast<char>(i * 31 % 251);
  const std::string at_snapshot = state;
  Gate gate;
  ctx.checkpoints().save_async(100, SnapshotOf(state, &gate));
  EXPECT_TRUE(ctx.checkpoints().pending()) << "save_async waited for the write";
  state.assign(state.size(), 'z');  // training changes the state meanwhile
  gate.Open();
  const auto uuid = ctx.checkpoints().wait();
  ASSERT_TRUE(uuid.has_value());
  EXPECT_FALSE(ctx.checkpoints().pending());
  EXPECT_EQ(ReadFile(root_ / *uuid / "state.bin"), at_snapshot);

  // The same files and checksums as a synchronous save of the same state.
  const std::string sync_uuid = ctx.checkpoints().save(
      100, [&](const fs::path& dir) { std::ofstream(dir / "state.bin", std::ios::binary) << at_snapshot; });
  EXPECT_EQ(ReadFile(root_ / *uuid / kCheckpointManifest), ReadFile(root_ / sync_uuid / kCheckpointManifest));
  auto resumed = Local({"--resume", (root_ / *uuid).string()});
  auto latest = resumed.checkpoints().latest_verified();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->batches, 100);
  EXPECT_FALSE(ctx.checkpoints().wait().has_value()) << "nothing is in flight any more";
}

TEST_F(AsyncCheckpointsTest, AtMostOneIsInFlightAndDueCountsFromItsBatches) {
  auto ctx = Local();
  const std::string state = "s";
  Gate first;
  ctx.checkpoints().save_async(10, SnapshotOf(state, &first));
  auto second = std::async(std::launch::async, [&] { ctx.checkpoints().save_async(20, SnapshotOf(state)); });
  EXPECT_EQ(second.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
      << "a second checkpoint started while the first was being written";
  first.Open();
  second.get();
  ASSERT_TRUE(ctx.checkpoints().wait().has_value());
  EXPECT_EQ(Entries(root_).size(), 2u);
}

TEST_F(AsyncCheckpointsTest, AFailedWriteIsThrownByTheNextCallAndLeavesNothing) {
  auto ctx = Local();
  ctx.checkpoints().save_async(
      5, [] { return Checkpoints::Writer([](const fs::path&) { throw std::runtime_error("disk full"); }); });
  EXPECT_THROW(ctx.checkpoints().wait(), std::runtime_error);
  EXPECT_TRUE(Entries(root_).empty()) << "a failed write left a folder";
  ctx.checkpoints().save_async(
      6, [] { return Checkpoints::Writer([](const fs::path&) { throw CheckpointError("no space"); }); });
  EXPECT_THROW(ctx.checkpoints().save(7, [](const fs::path& dir) { std::ofstream(dir / "x") << "x"; }),
               CheckpointError);
  EXPECT_THROW(ctx.checkpoints().save_async(8, [] { return Checkpoints::Writer(); }), CheckpointError);
}

TEST_F(AsyncCheckpointsTest, AProcessThatDiesMidWriteLeavesThePreviousCheckpointTheLatest) {
  RegistryMaster master;
  FakeHttpServer server([&](const auto& req) { return master.Handle(req); });
  const pid_t child = ::fork();
  if (child == 0) {
    auto ctx = Cluster(server.url());
    ctx.checkpoints().save(10, [](const fs::path& dir) { std::ofstream(dir / "state.bin") << "ten"; });
    ctx.checkpoints().save_async(20, [] {
      return Checkpoints::Writer([](const fs::path& dir) {
        std::ofstream(dir / "state.bin") << "twen";
        ::_exit(0);  // the process dies in the middle of the background write
      });
    });
    std::this_thread::sleep_for(std::chrono::seconds(10));
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  std::lock_guard lock(master.mutex);
  ASSERT_EQ(master.records.size(), 1u);
  EXPECT_EQ(master.records.begin()->second["batches"], 10) << "only the finished checkpoint is registered";
  for (const auto& name : Entries(root_ / "exp"))
    if (name.rfind(".tmp-", 0) != 0) EXPECT_EQ(name, master.records.begin()->first);
}

TEST_F(AsyncCheckpointsTest, AcknowledgingAPreemptionFinishesTheCheckpointInFlight) {
  RegistryMaster master;
  FakeHttpServer server([&](const auto& req) { return master.Handle(req); });
  auto ctx = Cluster(server.url());
  Gate gate;
  const std::string state = "state";
  ctx.checkpoints().save_async(30, SnapshotOf(state, &gate));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    gate.Open();
  });
  ctx.preempt().acknowledge();
  opener.join();
  std::lock_guard lock(master.mutex);
  ASSERT_EQ(master.records.size(), 1u) << "the trial said it stopped before its checkpoint was registered";
  EXPECT_EQ(master.records.begin()->second["batches"], 30);
}

TEST_F(AsyncCheckpointsTest, AWriterThatHashesItsBytesIsCheckedAgainstWhatItLeft) {
  auto ctx = Local();
  const std::string bytes = "hashed in memory";
  auto writing = [&](std::vector<CheckpointFile> listed, bool extra) {
    return [=] {
      return Checkpoints::HashingWriter([=](const fs::path& dir) {
        std::ofstream(dir / "state.bin", std::ios::binary) << bytes;
        if (extra) std::ofstream(dir / "unlisted.bin") << "x";
        return listed;
      });
    };
  };
  const CheckpointFile right{"state.bin", bytes.size(), Sha256Bytes(bytes.data(), bytes.size())};
  EXPECT_EQ(right.sha256, Sha256File([&] {
              fs::create_directories(root_);
              std::ofstream(root_ / "probe", std::ios::binary) << bytes;
              return root_ / "probe";
            }()));
  fs::remove(root_ / "probe");
  ctx.checkpoints().save_async_hashed(1, writing({right}, false));
  const auto uuid = ctx.checkpoints().wait();
  ASSERT_TRUE(uuid.has_value());
  auto resumed = Local({"--resume", (root_ / *uuid).string()});
  EXPECT_EQ(resumed.checkpoints().latest_verified()->files[0].sha256, right.sha256);

  ctx.checkpoints().save_async_hashed(2, writing({{"state.bin", bytes.size() + 1, right.sha256}}, false));
  EXPECT_THROW(ctx.checkpoints().wait(), CheckpointError) << "a size that is not the file's";
  ctx.checkpoints().save_async_hashed(3, writing({right}, true));
  EXPECT_THROW(ctx.checkpoints().wait(), CheckpointError) << "a file the writer did not list";
  // A digest that is not the bytes' is registered as given, and the restore
  // that checks every byte refuses the checkpoint.
  ctx.checkpoints().save_async_hashed(4, writing({{"state.bin", bytes.size(), std::string(64, '0')}}, false));
  const auto wrong = ctx.checkpoints().wait();
  ASSERT_TRUE(wrong.has_value());
  auto refused = Local({"--resume", (root_ / *wrong).string()});
  EXPECT_THROW(refused.checkpoints().latest_verified(), CheckpointError);
}

}  // namespace
}  // namespace ring::trial
