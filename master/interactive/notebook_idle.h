#pragma once
// When a notebook is idle, as Determined's notebook_idle_type means it, from
// what its Jupyter server's REST API answers (GET api/kernels,
// api/terminals and api/sessions under the server's base URL), and how long
// it has been: a notebook idle for its task's idle timeout ends and frees
// its slots. Pure: the fetching is JupyterProbe's (jupyter_probe.h).
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/notebook_idle_type.h"
#include "common/status.h"

namespace ring {

// One look at a Jupyter server.
struct JupyterState {
  size_t kernels = 0;
  size_t terminals = 0;
  size_t sessions = 0;
  bool kernel_connected = false;  // some kernel has a connection
  bool kernel_busy = false;       // some kernel's execution_state is busy
  // The latest last_activity of its kernels and terminals (ISO 8601 text,
  // which orders as time does); empty when there are none.
  std::string last_activity;
};

// The three answers' JSON bodies; an error names the one that is not what
// Jupyter answers.
Result<JupyterState> ParseJupyterState(std::string_view kernels, std::string_view terminals,
                                       std::string_view sessions);

class NotebookIdleClock {
 public:
  using Time = std::chrono::steady_clock::time_point;
  NotebookIdleClock(NotebookIdleType type, std::chrono::seconds timeout) : type_(type), timeout_(timeout) {}

  // Whether `state` is idle for this type, compared with the previous look.
  bool IsIdle(const JupyterState& state) const;
  // Notes one look at `now`; true once the notebook has been idle, look
  // after look, for the timeout. A look that is not idle starts over; so
  // does a server that could not be asked (Unknown), which is never idle.
  bool Observe(Time now, const JupyterState& state);
  void Unknown();
  std::optional<Time> idle_since() const { return idle_since_; }
  NotebookIdleType type() const { return type_; }
  std::chrono::seconds timeout() const { return timeout_; }

 private:
  const NotebookIdleType type_;
  const std::chrono::seconds timeout_;
  std::string last_activity_;  // of the previous look (kActivity)
  bool looked_ = false;
  std::optional<Time> idle_since_;
};

}  // namespace ring
