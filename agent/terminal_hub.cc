#include "agent/terminal_hub.h"

#include <algorithm>

namespace ring {
namespace {

TerminalSize SizeOf(int rows, int cols) {
  return TerminalSize{static_cast<uint16_t>(std::clamp(rows, 1, 1000)),
                      static_cast<uint16_t>(std::clamp(cols, 1, 1000))};
}

}  // namespace

void TerminalHub::Add(const std::string& allocation_id, int rank, int64_t pid) {
  std::lock_guard lock(mutex_);
  terminals_[{allocation_id, rank}].pid = pid;
}

void TerminalHub::Output(const std::string& allocation_id, int rank, const std::string& bytes) {
  std::lock_guard lock(mutex_);
  auto it = terminals_.find({allocation_id, rank});
  if (it == terminals_.end()) return;
  auto& scrollback = it->second.scrollback;
  scrollback += bytes;
  if (scrollback.size() > kScrollback) scrollback.erase(0, scrollback.size() - kScrollback);
  for (const auto& session : it->second.sessions) sink_.Send(proto::TerminalOutput{session, bytes});
}

void TerminalHub::Remove(const std::string& allocation_id, int rank) {
  std::lock_guard lock(mutex_);
  auto it = terminals_.find({allocation_id, rank});
  if (it == terminals_.end()) return;
  for (const auto& session : it->second.sessions) {
    sessions_.erase(session);
    sink_.Send(proto::TerminalClosed{session, "the shell exited"});
  }
  terminals_.erase(it);
}

void TerminalHub::Close(const std::string& session, const std::string& reason) {
  auto it = sessions_.find(session);
  if (it != sessions_.end()) {
    if (auto t = terminals_.find(it->second); t != terminals_.end()) t->second.sessions.erase(session);
    sessions_.erase(it);
  }
  if (!reason.empty()) sink_.Send(proto::TerminalClosed{session, reason});
}

void TerminalHub::Handle(const proto::Message& message) {
  std::lock_guard lock(mutex_);
  if (const auto* open = std::get_if<proto::TerminalOpen>(&message)) {
    auto it = terminals_.find({open->allocation_id, open->rank});
    if (it == terminals_.end() || sessions_.count(open->session)) {
      sink_.Send(proto::TerminalClosed{
          open->session, it == terminals_.end()
                             ? "no terminal of allocation " + open->allocation_id + " runs on this agent"
                             : "the session is open already"});
      return;
    }
    it->second.sessions.insert(open->session);
    sessions_[open->session] = it->first;
    (void)launcher_.ResizeTerminal(it->second.pid, SizeOf(open->rows, open->cols));
    if (!it->second.scrollback.empty())
      sink_.Send(proto::TerminalOutput{open->session, it->second.scrollback});
    return;
  }
  std::string session;
  std::visit(
      [&](const auto& m) {
        if constexpr (requires { m.session; }) session = m.session;
      },
      message);
  auto found = sessions_.find(session);
  if (found == sessions_.end()) {
    if (!std::holds_alternative<proto::TerminalClose>(message))
      sink_.Send(proto::TerminalClosed{session, "no such terminal session"});
    return;
  }
  const int64_t pid = terminals_[found->second].pid;
  Status status = Status::Ok();
  if (const auto* input = std::get_if<proto::TerminalInput>(&message))
    status = launcher_.WriteTerminal(pid, input->data);
  else if (const auto* resize = std::get_if<proto::TerminalResize>(&message))
    status = launcher_.ResizeTerminal(pid, SizeOf(resize->rows, resize->cols));
  else if (std::holds_alternative<proto::TerminalClose>(message))
    Close(session, "");
  if (!status.ok()) Close(session, "the terminal refused: " + status.message());
}

size_t TerminalHub::sessions() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

}  // namespace ring
