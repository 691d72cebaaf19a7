#include "master/interactive/notebook_idle.h"

#include <nlohmann/json.hpp>

namespace ring {
namespace {

using nlohmann::json;

Result<json> ListOf(std::string_view body, const char* what) {
  json list = json::parse(body, nullptr, false);
  if (list.is_discarded() || !list.is_array())
    return InvalidArgument(std::string("Jupyter's ") + what + " answer is not a JSON list");
  for (const auto& item : list)
    if (!item.is_object())
      return InvalidArgument(std::string("Jupyter's ") + what + " list holds a non-object");
  return list;
}

void NoteActivity(const json& item, std::string& latest) {
  if (auto it = item.find("last_activity"); it != item.end() && it->is_string())
    latest = std::max(latest, it->get<std::string>());
}

}  // namespace

Result<JupyterState> ParseJupyterState(std::string_view kernels, std::string_view terminals,
                                       std::string_view sessions) {
  auto k = ListOf(kernels, "api/kernels");
  if (!k.ok()) return k.status();
  auto t = ListOf(terminals, "api/terminals");
  if (!t.ok()) return t.status();
  auto s = ListOf(sessions, "api/sessions");
  if (!s.ok()) return s.status();
  JupyterState state;
  state.kernels = k->size();
  state.terminals = t->size();
  state.sessions = s->size();
  for (const auto& kernel : *k) {
    const auto connections = kernel.find("connections");
    if (connections != kernel.end() && connections->is_number() && connections->get<double>() > 0)
      state.kernel_connected = true;
    if (kernel.value("execution_state", "") == "busy") state.kernel_busy = true;
    NoteActivity(kernel, state.last_activity);
  }
  for (const auto& terminal : *t) NoteActivity(terminal, state.last_activity);
  return state;
}

bool NotebookIdleClock::IsIdle(const JupyterState& state) const {
  switch (type_) {
    case NotebookIdleType::kKernelsOrTerminals:
      return state.kernels == 0 && state.terminals == 0 && state.sessions == 0;
    case NotebookIdleType::kKernelConnections:
      return !state.kernel_connected;
    case NotebookIdleType::kActivity:
      return !state.kernel_busy && looked_ && state.last_activity == last_activity_;
  }
  return false;
}

bool NotebookIdleClock::Observe(Time now, const JupyterState& state) {
  const bool idle = IsIdle(state);
  looked_ = true;
  last_activity_ = state.last_activity;
  if (!idle) {
    idle_since_.reset();
    return false;
  }
  if (!idle_since_) idle_since_ = now;
  return now - *idle_since_ >= timeout_;
}

void NotebookIdleClock::Unknown() {
  idle_since_.reset();
}

}  // namespace ring
