// Sharded checkpoints with real ranks: three processes
// (checkpoint_rank_helper) each write their part of one checkpoint, which
// rank 0 registers once with the test's master; every rank restores its own
// part; a world of another size is refused with the reason; a corrupted
// part fails its own rank only; and a rank killed (SIGKILL) in the middle
// of writing its part fails the checkpoint on every rank and leaves the
// previous one the latest, with nothing new registered or moved into place.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/unit/runtime/runtime_checkpoint_fixture.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ring::testing::ChildProcess;
using ring::testing::FakeHttpServer;

class ShardedCheckpointsTest : public checkpoint_testing::CheckpointTest {
 protected:
  void SetUp() override {
    CheckpointTest::SetUp();
    fs::create_directories(root_);  // the ranks' logs
    server_ = std::make_unique<FakeHttpServer>([this](const auto& req) { return master_.Handle(req); });
  }
  void TearDown() override {
    ranks_.clear();
    server_.reset();
    CheckpointTest::TearDown();
  }

  // Starts `world` ranks in `mode`; the store is fresh per round.
  void StartRanks(int world, const std::string& mode, std::vector<std::string> extra = {}) {
    ranks_.clear();
    ranks_.reserve(static_cast<size_t>(world));
    ++round_;
    for (int r = 0; r < world; ++r) {
      std::vector<std::string> argv = {CHECKPOINT_RANK_HELPER,
                                       "--master",
                                       server_->url(),
                                       "--root",
                                       root_.string(),
                                       "--store",
                                       (root_ / ("store-" + std::to_string(round_))).string(),
                                       "--rank",
                                       std::to_string(r),
                                       "--world",
                                       std::to_string(world),
                                       "--mode",
                                       mode};
      argv.insert(argv.end(), extra.begin(), extra.end());
      ranks_.emplace_back(argv, std::map<std::string, std::string>{}, Log(r));
    }
  }
  std::string Log(int rank) const {
    return (root_ / ("rank-" + std::to_string(round_) + "-" + std::to_string(rank) + ".log")).string();
  }
  std::string LogText(int rank) const { return ring::testing::ReadFileText(Log(rank)); }
  int Wait(int rank, std::chrono::milliseconds timeout = 60s) {
    return ranks_[static_cast<size_t>(rank)].Wait(timeout);
  }
  std::map<std::string, nlohmann::json> Records() {
    std::lock_guard lock(master_.mutex);
    return master_.records;
  }
  // The checkpoint folders moved into place (no temporary ones).
  std::vector<std::string> Committed() {
    std::vector<std::string> out;
    for (const auto& name : Entries(root_ / "exp"))
      if (name.rfind(".tmp-", 0) != 0) out.push_back(name);
    return out;
  }

  RegistryMaster master_;
  std::unique_ptr<FakeHttpServer> server_;
  std::vector<ChildProcess> ranks_;
  int round_ = 0;
};

TEST_F(ShardedCheckpointsTest, EveryRankWritesItsPartOfOneCheckpointRegisteredOnce) {
  StartRanks(3, "save");
  for (int r = 0; r < 3; ++r) ASSERT_EQ(Wait(r), 0) << "rank " << r << ":\n" << LogText(r);
  const auto records = Records();
  ASSERT_EQ(records.size(), 4u) << "one registration per checkpoint, by rank 0";
  // Every rank names the same four checkpoints.
  const std::string saved = LogText(0).substr(LogText(0).find("saved "));
  for (int r = 1; r < 3; ++r) EXPECT_NE(LogText(r).find(saved), std::string::npos) << LogText(r);
  for (const auto& [uuid, record] : records) {
    EXPECT_EQ(record["metadata"]["ring_shards"], 3);
    ASSERT_EQ(record["resources"].size(), 3u) << record.dump();
    for (int r = 0; r < 3; ++r) {
      const auto& file = record["resources"][static_cast<size_t>(r)];
      EXPECT_EQ(file["path"], "rank-" + std::to_string(r) + "/part.bin");
      const std::string bytes =
          checkpoint_testing::ReadFile(root_ / "exp" / uuid / file["path"].get<std::string>());
      EXPECT_EQ(bytes.size(), 1u << 20);
      EXPECT_EQ(Sha256Bytes(bytes.data(), bytes.size()), file["sha256"]);
    }
    // The manifest lists the same files as the registration.
    const auto manifest =
        nlohmann::json::parse(checkpoint_testing::ReadFile(root_ / "exp" / uuid / kCheckpointManifest));
    EXPECT_EQ(manifest["resources"], record["resources"]);
  }
  // Four checkpoints took the store's two slots in turn: uuid, done and
  // the parts of ranks 1 and 2 in each, however many are written.
  int keys = 0;
  for (const auto& name : Entries(root_ / "store-1"))
    if (name.rfind("k-ring.checkpoints", 0) == 0) ++keys;
  EXPECT_EQ(keys, 8);
  EXPECT_EQ(Committed().size(), 4u);
  EXPECT_TRUE(Entries(root_ / "exp").size() == 4u) << "a temporary folder was left";

  std::string latest;
  for (const auto& [uuid, record] : records)
    if (record["batches"] == 20) latest = uuid;
  ASSERT_FALSE(latest.empty());
  const std::string resume = (root_ / "exp" / latest).string();

  // Every rank restores its own part, checked against the registration.
  StartRanks(3, "restore", {"--resume", resume});
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(Wait(r), 0) << "rank " << r << ":\n" << LogText(r);
    EXPECT_NE(LogText(r).find("restored " + latest + " 20"), std::string::npos) << LogText(r);
  }

  // Another number of ranks has no part of its own: said on every rank.
  StartRanks(2, "restore", {"--resume", resume});
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(Wait(r), 3) << "rank " << r << ":\n" << LogText(r);
    EXPECT_NE(LogText(r).find("holds the parts of 3 ranks and this trial runs 2"), std::string::npos)
        << LogText(r);
  }

  // A corrupted part fails the rank that owns it, naming the file.
  {
    const fs::path part = root_ / "exp" / latest / "rank-1" / "part.bin";
    fs::permissions(part, fs::perms::owner_write, fs::perm_options::add);
    std::fstream f(part, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(100);
    f.put('\x7f');
  }
  StartRanks(3, "restore", {"--resume", resume});
  for (int r = 0; r < 3; ++r) {
    const int code = Wait(r);
    if (r == 1) {
      EXPECT_EQ(code, 3) << LogText(r);
      EXPECT_NE(LogText(r).find("file rank-1/part.bin is corrupted"), std::string::npos) << LogText(r);
    } else {
      EXPECT_EQ(code, 0) << "rank " << r << ":\n" << LogText(r);
    }
  }
}

// Kills rank `victim` (SIGKILL) while it writes its part of the second checkpoint.
class ShardedCrashTest : public ShardedCheckpointsTest, public ::testing::WithParamInterface<int> {};

TEST_P(ShardedCrashTest, ARankKilledMidWriteLeavesThePreviousCheckpointTheLatest) {
  const int victim = GetParam();
  StartRanks(3, "hang", {"--victim", std::to_string(victim), "--timeout-ms", "3000"});
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (LogText(victim).find("writing") == std::string::npos && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(20ms);
  ASSERT_NE(LogText(victim).find("writing"), std::string::npos) << LogText(victim);
  ranks_[static_cast<size_t>(victim)].Signal(SIGKILL);
  for (int r = 0; r < 3; ++r) {
    if (r == victim) continue;
    EXPECT_EQ(Wait(r, 30s), 5) << "rank " << r << ":\n" << LogText(r);
    EXPECT_NE(LogText(r).find("failed: sharded checkpoint"), std::string::npos) << LogText(r);
  }
  const auto records = Records();
  ASSERT_EQ(records.size(), 1u) << "the checkpoint of a killed rank was registered";
  EXPECT_EQ(records.begin()->second["batches"], 10);
  EXPECT_EQ(Committed(), std::vector<std::string>{records.begin()->first})
      << "the unfinished checkpoint was moved into place";
}

INSTANTIATE_TEST_SUITE_P(Victims, ShardedCrashTest, ::testing::Values(0, 1),
                         [](const auto& info) { return info.param == 0 ? "Rank0" : "Rank1"; });

}  // namespace
}  // namespace ring::trial
