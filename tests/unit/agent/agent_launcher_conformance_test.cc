// Behaviour every ProcessLauncher shares, run against the POSIX launcher and
// the fake, so the fake the runner tests rely on cannot drift from the real one.
#include <signal.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

#include "agent/fake_process_launcher.h"
#include "agent/posix_process_launcher.h"

namespace ring {
namespace {

using namespace std::chrono_literals;

struct ExitLog {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<ExitStatus> exits;

  ProcessCallbacks Callbacks() {
    return {[](OutputStream, std::string) {},
            [this](ExitStatus s) {
              std::lock_guard lock(mutex);
              exits.push_back(s);
              cv.notify_all();
            }};
  }
  bool WaitExits(size_t n) {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, 10s, [&] { return exits.size() >= n; });
  }
  size_t count() {
    std::lock_guard lock(mutex);
    return exits.size();
  }
};

using Factory = std::function<std::unique_ptr<ProcessLauncher>()>;

class AgentLauncherConformance : public ::testing::TestWithParam<std::pair<const char*, Factory>> {
 protected:
  std::unique_ptr<ProcessLauncher> launcher_ = GetParam().second();
  // A process that runs until signalled and honours SIGTERM.
  ProcessSpec LongRunning() const { return ProcessSpec{ShellCommand("exec sleep 30"), "", {}}; }
};

TEST_P(AgentLauncherConformance, PidsArePositiveAndDistinct) {
  ExitLog log;
  auto a = launcher_->Launch(LongRunning(), log.Callbacks());
  auto b = launcher_->Launch(LongRunning(), log.Callbacks());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(a->pid, 0);
  EXPECT_NE(a->pid, b->pid);
  launcher_->Terminate(a->pid, 0ms);
  launcher_->Terminate(b->pid, 0ms);
  ASSERT_TRUE(log.WaitExits(2));
}

TEST_P(AgentLauncherConformance, TerminateEndsAProcessOnceWithSigterm) {
  ExitLog log;
  auto h = launcher_->Launch(LongRunning(), log.Callbacks());
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(launcher_->Signal(h->pid, 0).ok());  // alive: signal 0 only checks
  launcher_->Terminate(h->pid, 5s);
  ASSERT_TRUE(log.WaitExits(1));
  EXPECT_EQ(log.exits[0].signal, SIGTERM);
  EXPECT_FALSE(log.exits[0].exit_code.has_value());
  // After the end: signals fail with NotFound, Terminate is a no-op, no second exit.
  EXPECT_EQ(launcher_->Signal(h->pid, SIGTERM).code(), ErrorCode::kNotFound);
  launcher_->Terminate(h->pid, 0ms);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(log.count(), 1u);
}

TEST_P(AgentLauncherConformance, TerminateWithoutGraceKills) {
  ExitLog log;
  auto h = launcher_->Launch(LongRunning(), log.Callbacks());
  ASSERT_TRUE(h.ok());
  launcher_->Terminate(h->pid, 0ms);
  ASSERT_TRUE(log.WaitExits(1));
  EXPECT_EQ(log.exits[0].signal, SIGKILL);
}

TEST_P(AgentLauncherConformance, UnknownPidIsNotFound) {
  EXPECT_EQ(launcher_->Signal(987654321, SIGTERM).code(), ErrorCode::kNotFound);
  launcher_->Terminate(987654321, 0ms);  // no effect, no crash
}

INSTANTIATE_TEST_SUITE_P(Launchers, AgentLauncherConformance,
                         ::testing::Values(std::make_pair("Posix", Factory([] {
                                                            return std::make_unique<PosixProcessLauncher>();
                                                          })),
                                           std::make_pair("Fake", Factory([] {
                                                            auto fake =
                                                                std::make_unique<FakeProcessLauncher>();
                                                            fake->set_exit_on_terminate(true);
                                                            return std::unique_ptr<ProcessLauncher>(
                                                                std::move(fake));
                                                          }))),
                         [](const auto& info) { return std::string(info.param.first); });

}  // namespace
}  // namespace ring
