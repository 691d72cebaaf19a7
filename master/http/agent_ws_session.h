#pragma once
// Accepts agent WebSocket connections and feeds their messages to the
// ExperimentController, over plain TCP (ws) or TLS (wss). Each session runs
// on its connection's strand; sends from other threads are posted there and
// written in order.
#include <memory>

#include "master/http/ws_upgrade.h"

namespace ring {

class ExperimentController;

class AgentWsAcceptor : public AgentChannelAcceptor {
 public:
  explicit AgentWsAcceptor(ExperimentController& controller) : controller_(controller) {}
  void Accept(boost::asio::ip::tcp::socket socket,
              boost::beast::http::request<boost::beast::http::string_body> request) override;
  void Accept(boost::beast::ssl_stream<boost::beast::tcp_stream> stream,
              boost::beast::http::request<boost::beast::http::string_body> request) override;

 private:
  ExperimentController& controller_;
};

}  // namespace ring
