// Copy-on-write checkpoints (Checkpoints::save_forked): a fork()ed writer
// process writes the state of the moment bit for bit (the same files and
// checksums as a synchronous save of it) while the caller changes it at
// once; other threads holding locks while it forks do not stop it; a writer
// killed with SIGKILL fails the checkpoint and leaves the previous one the
// latest; a writer dies with the process that forked it and holds none of
// its descriptors; and names that
// leave the checkpoint are refused before anything is forked.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/unit/runtime/runtime_checkpoint_fixture.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using checkpoint_testing::ReadFile;
using ring::testing::FakeHttpServer;

class ForkedCheckpointsTest : public checkpoint_testing::CheckpointTest {
 protected:
  // The checkpoint folders moved into place under `dir`.
  static std::vector<std::string> Committed(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& name : Entries(dir))
      if (name.rfind(".tmp-", 0) != 0) out.push_back(name);
    return out;
  }
};

std::vector<char> Pattern(size_t size, int seed) {
  std::vector<char> out(size);
  for (size_t i = 0; i < size; ++i) out[i] = static_cast<char>((i * 131 + static_cast<size_t>(seed)) % 251);
  return out;
}

// This process's children (the writer), from /proc.
std::vector<pid_t> Children() {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = ReadFile(entry.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == ::getpid())
      out.push_back(std::stoi(name));
  }
  return out;
}

TEST_F(ForkedCheckpointsTest, TheWriterHoldsTheStateOfTheMomentBitForBit) {
  auto ctx = Local();
  std::vector<char> weights = Pattern(8 << 20, 1);
  std::vector<char> step = Pattern(100, 2);
  const std::vector<char> weights_then = weights, step_then = step;
  ctx.checkpoints().save_forked(100, {{"weights.bin", weights.data(), weights.size()},
                                      {"nested/step.bin", step.data(), step.size()},
                                      {"empty.bin", nullptr, 0}});
  std::memset(weights.data(), 0x55, weights.size());  // training changes the state at once
  step.assign(step.size(), 'z');
  const auto uuid = ctx.checkpoints().wait();
  ASSERT_TRUE(uuid.has_value());
  const fs::path dir = root_ / *uuid;
  EXPECT_EQ(ReadFile(dir / "weights.bin"), std::string(weights_then.begin(), weights_then.end()));
  EXPECT_EQ(ReadFile(dir / "nested" / "step.bin"), std::string(step_then.begin(), step_then.end()));
  EXPECT_TRUE(fs::exists(dir / "empty.bin"));

  // The same files and checksums as a synchronous save of the same state.
  const std::string sync_uuid = ctx.checkpoints().save(100, [&](const fs::path& d) {
    std::ofstream(d / "weights.bin", std::ios::binary).write(weights_then.data(), weights_then.size());
    fs::create_directories(d / "nested");
    std::ofstream(d / "nested" / "step.bin", std::ios::binary).write(step_then.data(), step_then.size());
    std::ofstream(d / "empty.bin", std::ios::binary);
  });
  EXPECT_EQ(ReadFile(dir / kCheckpointManifest), ReadFile(root_ / sync_uuid / kCheckpointManifest));
  auto resumed = Local({"--resume", dir.string()});
  auto latest = resumed.checkpoints().latest_verified();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->files.size(), 3u);
  EXPECT_TRUE(Children().empty()) << "the writer was not reaped";
}

TEST_F(ForkedCheckpointsTest, ThreadsHoldingLocksWhileItForksDoNotStopTheWriter) {
  auto ctx = Local();
  std::atomic<bool> stop{false};
  std::mutex busy;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      while (!stop) {  // allocates and holds a lock all the time
        std::lock_guard lock(busy);
        std::vector<std::string> junk(64, std::string(1000, 'x'));
      }
    });
  std::vector<char> state = Pattern(1 << 20, 3);
  for (int i = 0; i < 10; ++i) {
    ctx.checkpoints().save_forked(i, {{"state.bin", state.data(), state.size()}});
    state[0] = static_cast<char>(i);
  }
  const auto last = ctx.checkpoints().wait();
  stop = true;
  for (auto& t : threads) t.join();
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(Committed(root_).size(), 10u);
  EXPECT_EQ(ReadFile(root_ / *last / "state.bin")[0], static_cast<char>(8));
}

TEST_F(ForkedCheckpointsTest, AKilledWriterLeavesThePreviousCheckpointTheLatest) {
  RegistryMaster master;
  FakeHttpServer server([&](const auto& req) { return master.Handle(req); });
  auto ctx = Cluster(server.url());
  ctx.checkpoints().save(10, [](const fs::path& dir) { std::ofstream(dir / "state.bin") << "ten"; });
  std::vector<char> big = Pattern(256 << 20, 4);  // hashing alone takes the writer ~0.2 s
  ctx.checkpoints().save_forked(20, {{"state.bin", big.data(), big.size()}});
  const auto children = Children();
  ASSERT_EQ(children.size(), 1u) << "no writer process to kill";
  ASSERT_EQ(::kill(children[0], SIGKILL), 0);
  try {
    ctx.checkpoints().wait();
    ADD_FAILURE() << "a killed writer's checkpoint was finished";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("was killed by signal 9"), std::string::npos) << e.what();
  }
  {
    std::lock_guard lock(master.mutex);
    ASSERT_EQ(master.records.size(), 1u);
    EXPECT_EQ(master.records.begin()->second["batches"], 10);
  }
  EXPECT_EQ(Entries(root_ / "exp").size(), 1u) << "the killed writer's folder was left";
  // The next one is written as usual.
  const std::string small = "thirty";
  ctx.checkpoints().save_forked(30, {{"state.bin", small.data(), small.size()}});
  ASSERT_TRUE(ctx.checkpoints().wait().has_value());
  std::lock_guard lock(master.mutex);
  EXPECT_EQ(master.records.size(), 2u);
}

TEST_F(ForkedCheckpointsTest, TheWriterDiesWithTheProcessThatForkedIt) {
  RegistryMaster master;
  FakeHttpServer server([&](const auto& req) { return master.Handle(req); });
  constexpr size_t kSize = 256 << 20;
  const pid_t trial = ::fork();
  if (trial == 0) {
    auto ctx = Cluster(server.url());
    ctx.checkpoints().save(10, [](const fs::path& dir) { std::ofstream(dir / "state.bin") << "ten"; });
    std::vector<char> big = Pattern(kSize, 5);
    ctx.checkpoints().save_forked(20, {{"state.bin", big.data(), big.size()}});
    ::_exit(0);  // the trial dies while its writer writes
  }
  int status = 0;
  ASSERT_EQ(::waitpid(trial, &status, 0), trial);
  ASSERT_TRUE(WIFEXITED(status));
  std::this_thread::sleep_for(2s);  // a writer still alive would have finished its file by now
  {
    std::lock_guard lock(master.mutex);
    ASSERT_EQ(master.records.size(), 1u);
    EXPECT_EQ(master.records.begin()->second["batches"], 10);
    EXPECT_EQ(Committed(root_ / "exp"), std::vector<std::string>{master.records.begin()->first});
  }
  for (const auto& name : Entries(root_ / "exp")) {
    if (name.rfind(".tmp-", 0) != 0) continue;
    std::error_code ec;
    const auto size = fs::file_size(root_ / "exp" / name / "state.bin", ec);
    if (!ec) EXPECT_LT(size, kSize) << "the writer went on after its trial died";
  }
}

TEST_F(ForkedCheckpointsTest, TheWriterKeepsNoneOfTheTrialsDescriptorsOpen) {
  auto ctx = Local();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);  // inherited by a fork (no O_CLOEXEC), as a trial's sockets are
  std::vector<char> big = Pattern(256 << 20, 6);  // hashing alone takes the writer ~0.2 s
  ctx.checkpoints().save_forked(1, {{"state.bin", big.data(), big.size()}});
  ::close(fds[1]);
  pollfd reader{fds[0], POLLIN, 0};
  // The writer is still running; the trial's close is seen at once.
  EXPECT_EQ(::poll(&reader, 1, 50), 1) << "the writer holds the trial's end of the pipe";
  EXPECT_TRUE(reader.revents & POLLHUP);
  EXPECT_FALSE(Children().empty()) << "the writer finished before the close was looked at";
  ::close(fds[0]);
  EXPECT_TRUE(ctx.checkpoints().wait().has_value());
}

TEST_F(ForkedCheckpointsTest, NamesOutsideTheCheckpointAreRefusedBeforeForking) {
  auto ctx = Local();
  const std::string x = "x";
  for (const auto& name : {"../x", "/abs", "a/../b", "", ".ring-checkpoint.json"})
    EXPECT_THROW(ctx.checkpoints().save_forked(1, {{name, x.data(), x.size()}}), CheckpointError) << name;
  EXPECT_THROW(ctx.checkpoints().save_forked(1, {{"a", x.data(), 1}, {"a", x.data(), 1}}), CheckpointError);
  EXPECT_TRUE(Entries(root_).empty());
  EXPECT_TRUE(Children().empty());
}

}  // namespace
}  // namespace ring::trial
