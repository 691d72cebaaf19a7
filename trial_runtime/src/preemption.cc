#include "ring/trial/preemption.h"

#include <signal.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "trial_api.h"

namespace ring::trial {
namespace {

std::atomic<bool> g_sigterm{false};

extern "C" void OnSigterm(int) {
  g_sigterm.store(true);
}

void InstallSigtermHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    sigaction(SIGTERM, nullptr, &current);
    if (current.sa_handler != SIG_DFL) return;  // the trial handles SIGTERM itself
    struct sigaction sa {};
    sa.sa_handler = OnSigterm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
  });
}

}  // namespace

// Shared with the detached polling thread, which may outlive the Preemption.
struct Preemption::Watch {
  std::atomic<bool> requested{false};
  std::atomic<bool> stop{false};
};

Preemption::Preemption(std::shared_ptr<detail::TrialApi> api) : api_(std::move(api)) {
  if (api_) InstallSigtermHandler();
}

Preemption::~Preemption() {
  if (watch_) watch_->stop = true;
}

bool Preemption::should_preempt() {
  if (api_ && !watch_) {
    watch_ = std::make_shared<Watch>();
    std::thread([watch = watch_, api = api_] {
      while (!watch->stop && !watch->requested) {
        auto reply = api->Call("GET", "/preemption?timeout_s=10", {}, std::chrono::seconds(20));
        if (reply.ok() && reply.body.is_object() && reply.body.value("preempt", false))
          watch->requested = true;
        if (reply.status == 409 || reply.status == 401 || reply.status == 404) return;  // fenced out
        if (!reply.ok()) std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    }).detach();
  }
  return g_sigterm.load() || (watch_ && watch_->requested.load());
}

void Preemption::acknowledge() {
  if (!api_ || acknowledged_) return;
  acknowledged_ = true;
  api_->Call("POST", "/preemption/ack", "{}", std::chrono::seconds(10));
}

}  // namespace ring::trial
