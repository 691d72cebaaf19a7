#pragma once
// What an admitted agent connection talks to (master/http/agent_ws_session):
// our own agents' resource manager (AgentRm), or the short-lived agents of
// batch jobs (SlurmRm's job agents). Hellos and disconnects are called on
// the lifecycle's executor; OnMessage on the io thread that read the frame.
#include <memory>
#include <string>
#include <string_view>

#include "common/agent_protocol.h"
#include "master/rm/agentrm/agent_channel.h"
#include "master/rm/resource_manager.h"

namespace ring {

// The ids of job agents begin with this: "slurm.<job id>.<node>". Enrolled
// agents may not take such an id.
inline constexpr std::string_view kJobAgentPrefix = "slurm.";

class AgentPeers {
 public:
  virtual ~AgentPeers() = default;
  virtual void OnHello(const std::string& agent_id, const proto::Hello& hello,
                       std::shared_ptr<AgentChannel> channel, SteadyTime now) = 0;
  virtual void OnMessage(const std::string& agent_id, const proto::Message& message, SteadyTime now) = 0;
  virtual void OnDisconnected(const std::string& agent_id, const AgentChannel* channel, SteadyTime now) = 0;
  // True when these peers close a connection that falls silent after its
  // hello (a heartbeat deadline), so the session need not time reads itself.
  virtual bool ClosesSilentConnections() const { return false; }
};

// The door for agents of batch jobs, whose ids begin with "slurm." and
// whose credential is their allocation's (never an enrolment).
class JobAgentDoor : public AgentPeers {
 public:
  // The authenticated agent id, or kUnauthenticated saying why.
  virtual Result<std::string> Authenticate(std::string_view authorization, std::string_view agent_id,
                                           const std::string& peer) = 0;
};

}  // namespace ring
