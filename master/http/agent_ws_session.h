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

namespace boost::asio {
class io_context;
}

namespace ring {

class AgentPeers;
class AgentEnrolments;
class JobAgentDoor;

// The upgrade carries "X-Ring-Agent-Id: <id>" and "Authorization: Bearer
// <credential>" (AgentEnrolments::Authenticate); the connection then belongs
// to that id, and a hello naming another is refused. Ids beginning with
// "slurm." are agents of Slurm jobs: `jobs` judges their allocation's
// credential and takes their messages (refused when null).
class AgentWsAcceptor : public AgentChannelAcceptor {
 public:
  using Defer = std::function<void(std::function<void()>)>;
  // `channel`: the io_context of the agents' own threads, to which a
  // plain-TCP connection moves once admitted (null: it stays where it was
  // accepted). A TLS connection stays: its stream cannot change executor.
  AgentWsAcceptor(AgentPeers& agents, AgentEnrolments& enrolments, Defer defer, JobAgentDoor* jobs = nullptr,
                  boost::asio::io_context* channel = nullptr)
      : agents_(agents), enrolments_(enrolments), defer_(std::move(defer)), jobs_(jobs), channel_(channel) {}
  Result<std::string> Admit(const boost::beast::http::request<boost::beast::http::string_body>& request,
                            const std::string& peer) override;
  void Accept(AnyStream stream, boost::beast::http::request<boost::beast::http::string_body> request,
              std::string agent_id) override;

 private:
  AgentPeers& agents_;
  AgentEnrolments& enrolments_;
  Defer defer_;
  JobAgentDoor* jobs_;
  boost::asio::io_context* channel_;
};

}  // namespace ring
