#pragma once
// Users' WebSockets to their tasks' terminals, relayed to the agents that
// run them (master/interactive/terminal_relay.h). Frames: binary both ways
// (typed bytes in, what the terminal shows out), the client's text frame
// {"type": "resize", "rows", "cols"}, and the master's text frame
// {"type": "closed", "reason"} when the session ends from the agent's side,
// before it closes. Closing the WebSocket closes the session only (the
// shell runs on). Each connection runs on its own strand; a client that
// reads slower than its shell prints is closed rather than buffered without
// bound.
#include <functional>
#include <string>

#include "master/http/ws_upgrade.h"

namespace ring {

class TerminalRelay;

class TerminalWsAcceptor : public TerminalChannelAcceptor {
 public:
  // Who may open which terminal: the policy (authentication, the task's
  // owner, its live allocation and agent) is the caller's.
  using Admitter = std::function<Result<TerminalAdmission>(
      const boost::beast::http::request<boost::beast::http::string_body>& request, const std::string& peer)>;
  // `matches`: whether a target is a terminal endpoint.
  TerminalWsAcceptor(TerminalRelay& relay, std::function<bool(std::string_view)> matches, Admitter admit)
      : relay_(relay), matches_(std::move(matches)), admit_(std::move(admit)) {}

  bool Handles(std::string_view target) const override { return matches_(target); }
  // The admitter's answer, with the size the target's query asks for
  // (?rows=R&cols=C, each from 1 to 1000; else 24 by 80).
  Result<TerminalAdmission> Admit(const boost::beast::http::request<boost::beast::http::string_body>& request,
                                  const std::string& peer) override;
  void Accept(AnyStream stream, boost::beast::http::request<boost::beast::http::string_body> request,
              TerminalAdmission admission) override;

  // A client whose unsent output exceeds this is closed.
  static constexpr size_t kMaxBacklogBytes = 4 << 20;

 private:
  TerminalRelay& relay_;
  std::function<bool(std::string_view)> matches_;
  Admitter admit_;
};

}  // namespace ring
