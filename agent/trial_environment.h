#pragma once
// Builds the environment of one trial process (the contract in DESIGN.md,
// "Trial process environment"). Pure: no I/O, no globals.
#include <map>
#include <string>
#include <vector>

#include "common/agent_protocol.h"

namespace ring {

using Environment = std::map<std::string, std::string>;

// The agent a rank runs on, as its environment names it.
struct AgentIdentity {
  std::string id;          // RING_AGENT_ID: ranks with the same id share a host
  std::string address;     // RING_AGENT_ADDR: where other ranks reach this host (--address, else the
                           // local address of the agent's connection to the master)
  std::string ca_file;     // RING_CA_FILE: the CA file the agent trusts the master's certificate with
                           // (--ca-file); empty = the agent has none, RING_CA_FILE is left as it is
  std::string python_dir;  // the runtime's Python folder (--python-dir): first on PYTHONPATH, before the
                           // experiment's own PYTHONPATH; empty = PYTHONPATH is left as it is
};

// Starts from `inherited` (what the trial gets of the agent's environment,
// AllowedAgentEnvironment, plus HOME, USER and LOGNAME of its account), adds the experiment's
// environment.variables from `start.environment`, then the variables Ringmaster
// manages (RING_*, the torchrun set, CUDA_VISIBLE_DEVICES), which win over
// both so a trial can never be handed another allocation's or agent's identity.
// CUDA_VISIBLE_DEVICES lists the UUIDs (or, without a UUID, the ids) of the
// cuda slots assigned; for cpu slots it is set to "" so a GPU on a mixed host
// is never picked up by accident.
Environment BuildTrialEnvironment(const proto::Start& start, const std::string& master_url,
                                  const AgentIdentity& agent, const std::vector<proto::Slot>& agent_slots,
                                  const Environment& inherited);

// The part of the agent's environment a trial may see: PATH, LANG, LC_*
// and TZ. Nothing else passes (no token, no secret, no other variable);
// PATH is a standard one when the agent has none.
Environment AllowedAgentEnvironment(const Environment& agent);

// The calling process's environment (reads `environ`).
Environment CurrentEnvironment();

// "NAME=value" entries, as execve wants them.
std::vector<std::string> ToEnvp(const Environment& env);

}  // namespace ring
