// ShmLocalGroup: the local ranks of one agent reducing, broadcasting and
// meeting in a barrier through one POSIX shared-memory segment, as threads
// and as forked processes; windows smaller than the buffers; timeouts that
// name the local ranks that did not arrive; nothing left in /dev/shm.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "distributed/shm/shm_local_group.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"

namespace ring::trial::shm {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Names of /dev/shm entries that contain `tag`.
std::vector<std::string> ShmEntries(const std::string& tag) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator("/dev/shm"))
    if (entry.path().filename().string().find(tag) != std::string::npos) out.push_back(entry.path().string());
  return out;
}

Deadline In(std::chrono::milliseconds timeout) {
  return Clock::now() + timeout;
}

// Runs body(local_rank) on `n` threads; what a body throws is kept per rank.
std::vector<std::string> RunThreads(int n, const std::function<void(int)>& body) {
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

struct ForkedResult {
  int exit_code = -1;  // -1: killed by a signal or still running at the limit
  std::string output;  // what the child wrote to its pipe
};

// Runs body(local_rank, out) in `n` forked processes; `out` goes back to the
// parent. A child still running after `limit` is killed.
std::vector<ForkedResult> RunForked(int n, const std::function<int(int, std::string&)>& body,
                                    std::chrono::seconds limit = 60s) {
  std::vector<pid_t> pids;
  std::vector<int> pipes;
  for (int r = 0; r < n; ++r) {
    int fds[2];
    if (pipe(fds) != 0) ADD_FAILURE() << "pipe failed";
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      std::string out;
      int code = 0;
      try {
        code = body(r, out);
      } catch (const std::exception& e) {
        out += std::string("exception: ") + e.what();
        code = 3;
      }
      (void)!write(fds[1], out.data(), out.size());
      _exit(code);
    }
    close(fds[1]);
    pids.push_back(pid);
    pipes.push_back(fds[0]);
  }
  std::vector<ForkedResult> results(static_cast<size_t>(n));
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (int r = 0; r < n; ++r) {
    int status = 0;
    for (;;) {
      if (waitpid(pids[static_cast<size_t>(r)], &status, WNOHANG) == pids[static_cast<size_t>(r)]) break;
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pids[static_cast<size_t>(r)], SIGKILL);
        waitpid(pids[static_cast<size_t>(r)], &status, 0);
        results[static_cast<size_t>(r)].output = "still running at the limit; ";
        break;
      }
      std::this_thread::sleep_for(5ms);
    }
    if (WIFEXITED(status)) results[static_cast<size_t>(r)].exit_code = WEXITSTATUS(status);
    char buffer[4096];
    ssize_t got = 0;
    while ((got = read(pipes[static_cast<size_t>(r)], buffer, sizeof buffer)) > 0)
      results[static_cast<size_t>(r)].output.append(buffer, static_cast<size_t>(got));
    close(pipes[static_cast<size_t>(r)]);
  }
  return results;
}

class ShmLocalGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    tag_ = "shmtest-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
  }
  void TearDown() override {
    EXPECT_TRUE(ShmEntries(tag_).empty()) << "left in /dev/shm: " << ShmEntries(tag_)[0];
  }

  ShmLocalOptions Options(int rank, int size, size_t slot_bytes = 4096, Timeout timeout = 10s) const {
    return {.local_rank = rank,
            .local_world_size = size,
            .tag = tag_,
            .slot_bytes = slot_bytes,
            .connect_timeout = timeout};
  }

  std::string tag_;
  std::shared_ptr<KeyValueStore> store_ = InMemoryStore();
};

template <typename T>
void ExpectSumToLeader(ShmLocalGroup& group, size_t count) {
  const int r = group.local_rank();
  const int n = group.local_world_size();
  std::vector<T> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = static_cast<T>((r + 1) * static_cast<int>(i % 7 + 1));
  const std::vector<T> before = data;
  group.reduce_to_leader(data.data(), count, DataTypeOf<T>(), ReduceOp::kSum, In(10s));
  if (r != 0) {
    EXPECT_EQ(data, before) << "a non-leader's buffer changed";
    return;
  }
  for (size_t i = 0; i < count; ++i)
    ASSERT_EQ(data[i], static_cast<T>(n * (n + 1) / 2 * static_cast<int>(i % 7 + 1))) << "element " << i;
}

TEST_F(ShmLocalGroupTest, ReducesEveryTypeToTheLeaderAcrossThreads) {
  auto errors = RunThreads(4, [&](int r) {
    auto group = ShmLocalGroup::Connect(Options(r, 4), *store_);
    EXPECT_FALSE(group->segment_name().empty());
    group->barrier(In(10s));  // the leader has returned from Connect
    EXPECT_TRUE(ShmEntries(tag_).empty()) << "the name is unlinked once every local rank mapped it";
    ExpectSumToLeader<float>(*group, 1000);
    ExpectSumToLeader<double>(*group, 333);
    ExpectSumToLeader<int32_t>(*group, 1);
    ExpectSumToLeader<int64_t>(*group, 4096);
    std::vector<int32_t> values{r, -r, 10 * r};
    group->reduce_to_leader(values.data(), values.size(), DataType::kInt32, ReduceOp::kMax, In(10s));
    if (r == 0) {
      EXPECT_EQ(values, (std::vector<int32_t>{3, 0, 30}));
    }
    values = {r, -r, 10 * r};
    group->reduce_to_leader(values.data(), values.size(), DataType::kInt32, ReduceOp::kMin, In(10s));
    if (r == 0) {
      EXPECT_EQ(values, (std::vector<int32_t>{0, -3, 0}));
    }
  });
  for (int r = 0; r < 4; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "local rank " << r;
}

TEST_F(ShmLocalGroupTest, BuffersMuchLargerThanTheSegmentGoThroughInWindows) {
  constexpr size_t kSlot = 256;  // 2 halves x 3 ranks x 256 bytes of data
  constexpr size_t kCount = 100'003;
  auto errors = RunThreads(3, [&](int r) {
    auto group = ShmLocalGroup::Connect(Options(r, 3, kSlot), *store_);
    ExpectSumToLeader<float>(*group, kCount);
    ExpectSumToLeader<int64_t>(*group, kCount);
    std::vector<int32_t> ints(kCount);
    for (size_t i = 0; i < kCount; ++i) ints[i] = r * static_cast<int32_t>(i % 1000);
    group->allreduce(ints.data(), kCount, DataType::kInt32, ReduceOp::kSum, In(10s));
    for (size_t i = 0; i < kCount; ++i)
      ASSERT_EQ(ints[i], 3 * static_cast<int32_t>(i % 1000)) << "element " << i;
    std::vector<double> data(kCount, -1.0);
    if (r == 1) std::iota(data.begin(), data.end(), 0.5);
    group->broadcast(data.data(), kCount, DataType::kFloat64, 1, In(10s));
    for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(data[i], static_cast<double>(i) + 0.5) << "element " << i;
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "local rank " << r;
}

TEST_F(ShmLocalGroupTest, BroadcastsFromEveryLocalRankBetweenReduces) {
  auto errors = RunThreads(4, [&](int r) {
    auto group = ShmLocalGroup::Connect(Options(r, 4, 128), *store_);
    for (int root = 0; root < 4; ++root) {
      std::vector<int32_t> data(100, r == root ? root * 1000 : -1);
      for (size_t i = 0; i < data.size() && r == root; ++i) data[i] += static_cast<int32_t>(i);
      group->broadcast(data.data(), data.size(), DataType::kInt32, root, In(10s));
      for (size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], root * 1000 + static_cast<int>(i));
      ExpectSumToLeader<float>(*group, 77);  // one window in each half in turn
    }
  });
  for (int r = 0; r < 4; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "local rank " << r;
}

TEST_F(ShmLocalGroupTest, BarrierHoldsEveryRankUntilTheLastArrives) {
  std::atomic<int> arrived{0};
  std::vector<std::chrono::milliseconds> waited(4);
  auto errors = RunThreads(4, [&](int r) {
    auto group = ShmLocalGroup::Connect(Options(r, 4), *store_);
    for (int round = 1; round <= 3; ++round) {
      if (r == 3) std::this_thread::sleep_for(150ms);
      const auto t0 = Clock::now();
      arrived.fetch_add(1);
      group->barrier(In(10s));
      EXPECT_GE(arrived.load(), 4 * round) << "local rank " << r << " left barrier " << round << " early";
      waited[static_cast<size_t>(r)] =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
      group->barrier(In(10s));  // nobody counts the next round before everyone checked this one
    }
  });
  for (int r = 0; r < 4; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "local rank " << r;
  for (int r = 0; r < 3; ++r) EXPECT_GE(waited[static_cast<size_t>(r)], 100ms) << "local rank " << r;
}

TEST_F(ShmLocalGroupTest, ARankThatNeverArrivesTimesOutNamingIt) {
  std::atomic<int> finished{0};
  auto errors = RunThreads(3, [&](int r) {
    auto group = ShmLocalGroup::Connect(Options(r, 3), *store_);
    if (r == 2) {  // connected, but never calls the reduce
      while (finished.load() < 2) std::this_thread::sleep_for(5ms);
      return;
    }
    std::vector<float> data(10, 1.0f);
    const auto t0 = Clock::now();
    try {
      group->reduce_to_leader(data.data(), data.size(), DataType::kFloat32, ReduceOp::kSum, In(300ms));
      ADD_FAILURE() << "local rank " << r << " finished a reduce without local rank 2";
    } catch (const CollectiveError& e) {
      EXPECT_LT(Clock::now() - t0, 3s);
      const std::string message = e.what();
      EXPECT_TRUE(message.find("local rank 2 did not arrive within") != std::string::npos ||
                  message.find("gave up: local reduce on local rank") != std::string::npos)
          << message;
    }
    // Unusable after the failure, on every call.
    EXPECT_THROW(group->barrier(In(1s)), CollectiveError);
    finished.fetch_add(1);
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "local rank " << r;
}

TEST_F(ShmLocalGroupTest, ARankGivingUpFailsTheOthersWithoutWaitingForTheirTimeouts) {
  std::atomic<int> finished{0};
  auto errors = RunThreads(3, [&](int r) {
    auto group = ShmLocalGroup::Connect(Options(r, 3), *store_);
    if (r == 2) {
      while (finished.load() < 2) std::this_thread::sleep_for(5ms);
      return;
    }
    const auto timeout = r == 0 ? 200ms : 60'000ms;
    const auto t0 = Clock::now();
    try {
      group->barrier(In(timeout));
      ADD_FAILURE() << "barrier passed without local rank 2";
    } catch (const CollectiveError& e) {
      EXPECT_LT(Clock::now() - t0, 5s) << "local rank " << r;
      if (r == 1) {
        EXPECT_NE(std::string(e.what()).find(
                      "local rank 0 gave up: local barrier on local rank 0 of 3: local rank 2 "
                      "did not arrive"),
                  std::string::npos)
            << e.what();
      }
    }
    finished.fetch_add(1);
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "local rank " << r;
}

TEST_F(ShmLocalGroupTest, ConnectNamesTheLocalRanksThatNeverMapTheSegment) {
  auto errors = RunThreads(2, [&](int r) {  // local ranks 2 and 3 of 4 never come
    auto group = ShmLocalGroup::Connect(Options(r, 4, 4096, 300ms), *store_);
    if (r == 1) {
      EXPECT_THROW(group->barrier(In(5s)), CollectiveError) << "the leader aborted the segment";
    }
  });
  EXPECT_NE(errors[0].find("shared-memory group: local ranks 2, 3 did not map segment /ring-" + tag_),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("within 300 ms"), std::string::npos) << errors[0];
}

TEST_F(ShmLocalGroupTest, ARankWhoseLeaderNeverComesGivesUpAtItsDeadline) {
  const auto t0 = Clock::now();
  EXPECT_THROW(ShmLocalGroup::Connect(Options(1, 2, 4096, 200ms), *store_), RendezvousError);
  EXPECT_LT(Clock::now() - t0, 3s);
}

TEST_F(ShmLocalGroupTest, OneLocalRankNeedsNoSegment) {
  auto group = ShmLocalGroup::Connect(Options(0, 1), *store_);
  EXPECT_EQ(group->segment_name(), "");
  std::vector<float> data{1, 2, 3};
  group->reduce_to_leader(data.data(), 3, DataType::kFloat32, ReduceOp::kSum, In(1s));
  group->broadcast(data.data(), 3, DataType::kFloat32, 0, In(1s));
  group->barrier(In(1s));
  EXPECT_EQ(data, (std::vector<float>{1, 2, 3}));
  EXPECT_FALSE(store_->check({"segment"}));
}

TEST_F(ShmLocalGroupTest, InconsistentOptionsAreRefused) {
  EXPECT_THROW(ShmLocalGroup::Connect(Options(2, 2), *store_), ConfigError);
  EXPECT_THROW(ShmLocalGroup::Connect(Options(0, 0), *store_), ConfigError);
  EXPECT_THROW(ShmLocalGroup::Connect(Options(0, 2, 100), *store_), ConfigError);
  // Local ranks that disagree on the local world size.
  auto errors = RunThreads(2, [&](int r) {
    auto group = ShmLocalGroup::Connect(Options(r, r == 0 ? 2 : 3, 4096, 500ms), *store_);
  });
  EXPECT_NE(errors[1].find("is for 2 local ranks, this rank expects 3"), std::string::npos) << errors[1];
  EXPECT_NE(errors[0].find("local rank 1 did not map"), std::string::npos) << errors[0];
}

TEST_F(ShmLocalGroupTest, ForkedProcessesReduceBroadcastAllreduceAndMeet) {
  char dir_template[] = "/tmp/ring-shm-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  constexpr size_t kCount = size_t{1} << 20;  // 4 MiB of floats through 2 x 4 x 64 KiB
  auto results = RunForked(4, [&](int r, std::string& out) {
    auto store = FileStore(dir);
    auto group = ShmLocalGroup::Connect(Options(r, 4, 64 << 10), *store);
    std::vector<float> data(kCount);
    for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<float>(r + static_cast<int>(i % 3));
    group->reduce_to_leader(data.data(), kCount, DataType::kFloat32, ReduceOp::kSum, In(30s));
    group->broadcast(data.data(), kCount, DataType::kFloat32, 0, In(30s));
    for (size_t i = 0; i < kCount; ++i)
      if (data[i] != static_cast<float>(6 + 4 * static_cast<int>(i % 3))) {
        out = "element " + std::to_string(i) + " is " + std::to_string(data[i]);
        return 2;
      }
    group->allreduce(data.data(), kCount, DataType::kFloat32, ReduceOp::kMax, In(30s));
    for (size_t i = 0; i < kCount; ++i)
      if (data[i] != static_cast<float>(6 + 4 * static_cast<int>(i % 3))) {
        out = "after the max, element " + std::to_string(i) + " is " + std::to_string(data[i]);
        return 2;
      }
    group->barrier(In(30s));
    out = "ok";
    return 0;
  });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(results[static_cast<size_t>(r)].exit_code, 0) << results[static_cast<size_t>(r)].output;
    EXPECT_EQ(results[static_cast<size_t>(r)].output, "ok");
  }
  fs::remove_all(dir);
}

TEST_F(ShmLocalGroupTest, AKilledLocalProcessFailsTheOthersWithATimeoutNotAHang) {
  char dir_template[] = "/tmp/ring-shm-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  auto results = RunForked(3, [&](int r, std::string& out) {
    auto store = FileStore(dir);
    auto group = ShmLocalGroup::Connect(Options(r, 3), *store);
    std::vector<float> data(50'000, 1.0f);
    if (r == 2) raise(SIGKILL);  // dies holding its mapping, before its part of the reduce
    try {
      group->reduce_to_leader(data.data(), data.size(), DataType::kFloat32, ReduceOp::kSum, In(1500ms));
    } catch (const CollectiveError& e) {
      out = e.what();
      return 0;
    }
    out = "the reduce finished without local rank 2";
    return 2;
  });
  EXPECT_EQ(results[2].exit_code, -1) << "killed by SIGKILL";
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[static_cast<size_t>(r)].exit_code, 0) << results[static_cast<size_t>(r)].output;
    const std::string& message = results[static_cast<size_t>(r)].output;
    EXPECT_TRUE(message.find("local rank 2 did not arrive within") != std::string::npos ||
                message.find("gave up") != std::string::npos)
        << message;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ring::trial::shm

namespace ring::trial::shm {
namespace {

// Reduce-scatter and allgather through windows far smaller than the
// buffers, in place and not, with ranks meeting every window.
TEST_F(ShmLocalGroupTest, ReduceScatterAndAllgatherGoThroughInWindows) {
  constexpr size_t kSlot = 192;  // 16 floats of each of 3 blocks per window
  constexpr size_t kCount = 10'007;
  auto errors = RunThreads(3, [&](int r) {
    auto group = ShmLocalGroup::Connect(Options(r, 3, kSlot), *store_);
    std::vector<int64_t> in(3 * kCount);
    for (size_t i = 0; i < in.size(); ++i) in[i] = (r + 1) * static_cast<int64_t>(i);
    std::vector<int64_t> out(kCount, -1);
    group->reduce_scatter(in.data(), out.data(), kCount, DataType::kInt64, ReduceOp::kSum, In(10s));
    for (size_t i = 0; i < kCount; ++i)
      ASSERT_EQ(out[i], 6 * static_cast<int64_t>(static_cast<size_t>(r) * kCount + i)) << "element " << i;
    // In place: the output is this rank's block of the input.
    std::vector<float> floats(3 * kCount);
    for (size_t i = 0; i < floats.size(); ++i)
      floats[i] = static_cast<float>(r * 1000 + static_cast<int>(i % 97));
    float* mine = floats.data() + static_cast<size_t>(r) * kCount;
    group->reduce_scatter(floats.data(), mine, kCount, DataType::kFloat32, ReduceOp::kMax, In(10s));
    for (size_t i = 0; i < kCount; ++i) {
      const auto want =
          static_cast<float>(2000 + static_cast<int>((static_cast<size_t>(r) * kCount + i) % 97));
      ASSERT_EQ(mine[i], want) << "element " << i;
    }

    std::vector<int32_t> part(kCount);
    for (size_t i = 0; i < kCount; ++i) part[i] = r * 100'000 + static_cast<int32_t>(i);
    std::vector<int32_t> all(3 * kCount, -1);
    group->allgather(part.data(), all.data(), kCount, DataType::kInt32, In(10s));
    for (size_t k = 0; k < 3; ++k)
      for (size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(all[k * kCount + i], static_cast<int32_t>(k * 100'000 + i))
            << "block " << k << " element " << i;
    std::fill(all.begin(), all.end(), -1);
    std::copy(part.begin(), part.end(),
              all.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r) * kCount));
    group->allgather(all.data() + static_cast<size_t>(r) * kCount, all.data(), kCount, DataType::kInt32,
                     In(10s));
    for (size_t k = 0; k < 3; ++k)
      for (size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(all[k * kCount + i], static_cast<int32_t>(k * 100'000 + i)) << "in place, block " << k;
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "local rank " << r;
}

// The sum of every element is folded in local rank order, whatever the
// window: 1e8 + 1 - 1e8 gives 0 in float that order, 1 in others.
TEST_F(ShmLocalGroupTest, AllreduceFoldsInLocalRankOrderInEveryWindow) {
  constexpr size_t kCount = 5'000;
  const float operand[3] = {1e8f, 1.0f, -1e8f};
  for (size_t slot : {size_t{64}, size_t{4096}, size_t{1} << 20}) {
    auto errors = RunThreads(3, [&](int r) {
      auto group = ShmLocalGroup::Connect(Options(r, 3, slot), *store_);
      std::vector<float> data(kCount, operand[r]);
      group->allreduce(data.data(), kCount, DataType::kFloat32, ReduceOp::kSum, In(10s));
      for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(data[i], 0.0f) << "slot " << slot << ", element " << i;
      group->barrier(In(10s));
    });
    for (int r = 0; r < 3; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "local rank " << r;
    SetUp();  // a fresh tag for the next group
  }
}

}  // namespace
}  // namespace ring::trial::shm
