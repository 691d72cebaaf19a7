// Ranks as separate processes (distributed_rank_helper) that rendezvous
// through a file store in a temporary directory and reduce over Gloo; one of
// them killed with SIGKILL mid-collective fails the others promptly.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace ring::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class DistributedProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ring-ranks-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override {
    ranks_.clear();  // stops any still running
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  ChildProcess& Start(int rank, int world, const std::string& mode, const std::string& count = "1000") {
    ranks_.emplace_back(std::vector<std::string>{DISTRIBUTED_RANK_HELPER, "--dir", dir_ + "/store", "--rank",
                                                 std::to_string(rank), "--world", std::to_string(world),
                                                 "--mode", mode, "--count", count},
                        std::map<std::string, std::string>{},
                        dir_ + "/rank-" + std::to_string(rank) + ".log");
    return ranks_.back();
  }

  std::string Log(int rank) { return ReadFileText(dir_ + "/rank-" + std::to_string(rank) + ".log"); }

  std::string dir_;
  std::vector<ChildProcess> ranks_;
};

TEST_F(DistributedProcessTest, ThreeProcessesAllreduceThroughAFileStore) {
  ranks_.reserve(3);
  for (int r = 0; r < 3; ++r) Start(r, 3, "allreduce", std::to_string(1 << 20));
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(ranks_[static_cast<size_t>(r)].Wait(60s), 0) << "rank " << r << ":\n" << Log(r);
    EXPECT_NE(Log(r).find("ok"), std::string::npos) << Log(r);
  }
  // The ranks met under the default group's keys.
  int records = 0;
  for (const auto& entry : fs::directory_iterator(dir_ + "/store"))
    if (entry.path().filename().string().rfind("k-default_2frank_2f", 0) == 0) ++records;
  EXPECT_EQ(records, 3);
}

TEST_F(DistributedProcessTest, AKilledRankFailsTheOthersWellBeforeTheirTimeout) {
  ranks_.reserve(3);
  Start(0, 3, "allreduce", std::to_string(1 << 20));
  Start(1, 3, "allreduce", std::to_string(1 << 20));
  ChildProcess& victim = Start(2, 3, "sleep");
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Log(2).find("connected") != std::string::npos; }, 30s))
      << Log(2);
  std::this_thread::sleep_for(200ms);  // ranks 0 and 1 are inside the allreduce, waiting for rank 2
  const auto t0 = std::chrono::steady_clock::now();
  victim.Signal(SIGKILL);
  for (int r = 0; r < 2; ++r) {
    // The helper's collective timeout is 60 s; the dead peer is noticed at once.
    EXPECT_EQ(ranks_[static_cast<size_t>(r)].Wait(20s), 3) << "rank " << r << ":\n" << Log(r);
    EXPECT_NE(Log(r).find("error: allreduce (sum of 1048576 float32) failed on rank " + std::to_string(r) +
                          " of 3"),
              std::string::npos)
        << Log(r);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
}

}  // namespace
}  // namespace ring::testing
