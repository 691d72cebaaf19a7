#pragma once
// Accepts agent WebSocket connections and feeds their messages to the
// agents' resource manager (AgentRm), over plain TCP (ws) or TLS (wss).
// Each session runs on its connection's strand; sends from other threads are
// posted there and written in order. Hellos and disconnects are deferred to
// the lifecycle's thread (`defer`); other frames are handed over at once
// (a heartbeat only moves a deadline).
#include <functional>
#include <memory>

#include "master/http/ws_upgrade.h"

namespace ring {

class AgentRm;

class AgentWsAcceptor : public AgentChannelAcceptor {
 public:
  using Defer = std::function<void(std::function<void()>)>;
  AgentWsAcceptor(AgentRm& agents, Defer defer) : agents_(agents), defer_(std::move(defer)) {}
  void Accept(AnyStream stream,
              boost::beast::http::request<boost::beast::http::string_body> request) override;

 private:
  AgentRm& agents_;
  Defer defer_;
};

}  // namespace ring
