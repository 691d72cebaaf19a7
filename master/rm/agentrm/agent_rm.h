#pragma once
// The resource manager of our own agents: each agent connects over a
// WebSocket (master/http/agent_ws_session.cc), says hello with its slots and
// the ranks it still runs, heartbeats, reports its processes' states and
// logs, and is told to start and kill ranks.
//
// Threads: the registry is guarded by mu_. Heartbeats (Heard) touch only an
// agent's deadline, on the io thread that read the frame, and never wait for
// anything else. Everything else — hellos, disconnects, enable/disable, the
// ResourceManager calls, Tick — runs on the lifecycle's executor (the
// session defers hellos and disconnects there), so store writes never run
// on an io thread and events reach the lifecycle in the order they came.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "master/rm/agent_peers.h"
#include "master/rm/agentrm/agent_enrolments.h"
#include "master/rm/agentrm/agent_registry.h"
#include "master/rm/resource_manager.h"

namespace ring {

class Store;

struct AgentRmOptions {
  std::chrono::milliseconds heartbeat_interval{1000};  // agents send heartbeats this often
  std::chrono::milliseconds heartbeat_timeout{10000};  // silence that closes an agent's connection
  std::chrono::milliseconds reconnect_window{25000};   // a disconnected agent is lost after this
  std::chrono::milliseconds kill_grace{10000};         // SIGTERM to SIGKILL on the agent
  // Who is enrolled with which pool and slots; hellos are judged against it.
  // Null (component tests) admits hellos as they come.
  const AgentEnrolments* enrolments = nullptr;
  AgentRefusalCounter count_refusal;  // the master's metric; may be empty
  // Task terminals (master/interactive/terminal_relay.h): an agent's
  // TerminalOutput or TerminalClosed goes to `terminal_message`, which
  // answers whether the session was one the master opened on that agent;
  // `terminals_gone` hears of an agent whose connection ended. Empty: the
  // master relays no terminals.
  std::function<bool(const std::string& agent_id, const proto::Message& message)> terminal_message;
  std::function<void(const std::string& agent_id)> terminals_gone;
};

class AgentRm : public ResourceManager, public AgentPeers {
 public:
  AgentRm(Store& store, AgentRmOptions options, RmEvents& events);

  // A connection authenticated as `agent_id` (its credential, checked at the
  // upgrade) said hello: judged against its enrolment (JudgeHello: another
  // id or pool closes the connection; slots beyond the enrolled count and
  // ranks placed elsewhere are cut), then answered with welcome; the agent
  // is recorded and the lifecycle told what it still runs. Replaces an older
  // connection of the same agent, which only the same credential can do.
  void OnHello(const std::string& agent_id, const proto::Hello& hello, std::shared_ptr<AgentChannel> channel,
               SteadyTime now) override;
  // A frame from a connected agent: pushes its heartbeat deadline back and
  // hands process states and logs of ranks placed on it to the lifecycle
  // (which posts them to its executor); reports on ranks placed elsewhere are
  // refused and counted. Safe on any thread; takes only mu_, never waits.
  void OnMessage(const std::string& agent_id, const proto::Message& message, SteadyTime now) override;
  // Only if `channel` is still the agent's connection: lost unless it comes
  // back within the reconnect window.
  void OnDisconnected(const std::string& agent_id, const AgentChannel* channel, SteadyTime now) override;
  // Tick closes a connected agent's connection after heartbeat_timeout of silence.
  bool ClosesSilentConnections() const override { return true; }

  // Operators: no new placements there; without `drain` its running work is
  // preempted (OnNodeEvicted). kNotFound for an unknown agent.
  // Sends `message` on the agent's live connection (a terminal's:
  // TerminalOpen, Input, Resize, Close); kUnavailable when it has none.
  Status SendToAgent(const std::string& agent_id, const proto::Message& message);
  Status Disable(const std::string& agent_id, bool drain);
  Status Enable(const std::string& agent_id);
  // `ring agent remove` (after its enrolment is revoked): closes its
  // connection and loses it now, so its allocations end (and their trials
  // restart elsewhere). kNotFound for an agent never seen.
  Status Remove(const std::string& agent_id);
  // GET /api/v1/agents: copied under mu_, turned into JSON after it.
  nlohmann::json AgentsJson() const;
  // Each pool's agents and slots counted under the lock, without listing them.
  std::map<std::string, PoolAgentCounts> CountAgents() const;
  const AgentRmOptions& options() const { return options_; }

  // ResourceManager.
  std::vector<AgentView> Offers() const override;
  Status CheckContainers(const std::string& pool, const std::string& runtime) const override;
  Status CheckFits(const ResourcesConfig& resources, const std::vector<std::string>& declared) const override;
  void Launch(const LaunchSpec& spec) override;
  void Adopt(const std::string& allocation_id, const std::vector<Placement>& placements, int processes,
             const std::string& pool, SteadyTime deadline) override;
  void Kill(const std::string& allocation_id, const std::vector<Placement>& placements, EndCause why,
            const std::string& node = "") override;
  void Release(const std::string& allocation_id) override;
  void Tick(SteadyTime now) override;

 private:
  void Send(const std::string& agent_id, const std::string& frame);
  void Refuse(AgentRefusal why, const std::string& agent_id, const std::string& what) const;

  Store& store_;
  const AgentRmOptions options_;
  RmEvents& events_;
  mutable std::mutex mu_;  // guards registry_ and stored_schedulable_
  AgentRegistry registry_;
  // Each stored agent's enabled and draining flags, read from the store at
  // the first hello and kept in step by Disable and Enable (their only
  // writers), so a hello looks its agent up here instead of listing every
  // stored agent (10,000 hellos would read 10,000 rows each).
  struct Schedulable {
    bool enabled = true;
    bool draining = false;
  };
  std::optional<std::map<std::string, Schedulable>> stored_schedulable_;
};

}  // namespace ring
