#include "ring/trial/preemption.h"

#include <signal.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "ring/trial/errors.h"
#include "trial_api.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPollPath = "/preemption?timeout_s=30";
constexpr auto kPollHttpTimeout = 45s;    // the long poll's 30 s plus slack
constexpr auto kMinPollInterval = 500ms;  // when a master answers at once
constexpr auto kPauseAfterFailure = 1s;

std::atomic<bool> g_sigterm{false};
std::atomic<int64_t> g_first_sigterm_ms{0};

int64_t MonotonicMs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

// The first SIGTERM asks the trial to stop. One more within a second is the
// same request (a batch system signals every process of a job and its step
// launcher forwards the signal again); a later one terminates as usual.
extern "C" void OnSigterm(int) {
  const int64_t now = MonotonicMs();
  int64_t first = 0;
  if (g_first_sigterm_ms.compare_exchange_strong(first, now) || now - first < 1000) {
    g_sigterm.store(true);
    return;
  }
  signal(SIGTERM, SIG_DFL);
  raise(SIGTERM);
}

// Only when SIGTERM still has its default action: a trial with its own
// handler keeps it.
void InstallSigtermHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGTERM, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
    struct sigaction sa {};
    sa.sa_handler = OnSigterm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
  });
}

}  // namespace

// Shared with the detached polling thread, which may outlive the Preemption
// while its last request is in flight.
struct Preemption::Watch {
  std::atomic<bool> requested{false};
  std::atomic<bool> stop{false};
  std::atomic<bool> ended{false};
  std::mutex mutex;  // guards ended_reason
  std::string ended_reason;
};

Preemption::Preemption(std::shared_ptr<detail::TrialApi> api) : api_(std::move(api)) {}

Preemption::~Preemption() {
  if (watch_) watch_->stop = true;
}

bool Preemption::should_preempt() {
  if (!watch_) {
    InstallSigtermHandler();
    watch_ = std::make_shared<Watch>();
    if (api_) {
      std::thread([watch = watch_, api = api_] {
        while (!watch->stop && !watch->requested) {
          const auto started = std::chrono::steady_clock::now();
          const auto reply = api->Call("GET", kPollPath, {}, kPollHttpTimeout);
          if (reply.ok() && reply.body.is_object() && reply.body.value("preempt", false)) {
            watch->requested = true;
            return;
          }
          if (reply.status == 401 || reply.status == 409) {
            std::lock_guard lock(watch->mutex);
            watch->ended_reason = detail::Describe(reply);
            watch->ended = true;
            return;
          }
          if (reply.status == 404) return;  // a master without the long poll: never preempted
          const auto pause = reply.ok() ? kMinPollInterval : std::chrono::milliseconds(kPauseAfterFailure);
          const auto elapsed = std::chrono::steady_clock::now() - started;
          if (elapsed < pause) std::this_thread::sleep_for(pause - elapsed);
        }
      }).detach();
    }
  }
  if (watch_->ended) {
    std::lock_guard lock(watch_->mutex);
    throw AllocationEndedError("the master ended this allocation (" + watch_->ended_reason +
                               "); this process must stop");
  }
  return g_sigterm.load() || watch_->requested.load();
}

void Preemption::acknowledge() {
  if (before_acknowledge_) before_acknowledge_();
  if (!api_ || acknowledged_) return;
  const auto reply = api_->Call("POST", "/preemption/ack", "{}");
  if (!reply.ok()) {
    detail::ThrowIfUnreachableOrEnded(reply, "acknowledging the request to stop");
    throw TrialError("the master refused the acknowledgement of the request to stop: " +
                     detail::Describe(reply));
  }
  acknowledged_ = true;
}

}  // namespace ring::trial
