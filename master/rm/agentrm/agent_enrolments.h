#pragma once
// Which agent ids are enrolled and with what credential, and the cluster
// token that enrols new ones. The cluster token only enrols: POST
// /api/v1/agents/enrol with it issues the id a random 256-bit credential of
// its own, stored as its SHA-256 (agent_enrolments) — a fast hash, since
// thousands of agents reconnect at once after a master restart — and every
// later connection of that id must present it (checked at the WebSocket
// upgrade, before anything else). An admin removes (revokes) an id, raises
// its slots, or rotates the cluster token here.
//
// Threads: everything is guarded by mu_ and safe on any thread. Authenticate
// runs on io threads at each upgrade and only reads memory; writes go to the
// store first, then to memory, so what is in memory is always durable.
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "master/rm/agentrm/agent_admission.h"

namespace ring {

class Store;

// Counts one refusal (the master's metric); may be empty.
using AgentRefusalCounter = std::function<void(AgentRefusal)>;

class AgentEnrolments {
 public:
  AgentEnrolments(Store& store, std::string cluster_token_file, std::string cluster_token,
                  AgentRefusalCounter count = {});

  // Reads the enrolments from the store (at start).
  Status Load();

  struct Issued {
    std::string agent_id;
    std::string credential;  // shown once; only its hash is kept
    std::string pool;
    int64_t slots = 0;
    std::string enrolled_at;
  };
  // POST /api/v1/agents/enrol: `authorization` must carry the current
  // cluster token (kUnauthenticated), `body` an EnrolRequest (kInvalidArgument
  // naming the field), and the id must not hold a valid credential
  // (kConflict: an admin removes it first).
  Result<Issued> Enrol(std::string_view authorization, std::string_view body, const std::string& peer);

  // The WebSocket upgrade's headers: the id they authenticate, or
  // kUnauthenticated saying why. Reads memory only.
  Result<std::string> Authenticate(std::string_view authorization, std::string_view agent_id,
                                   const std::string& peer);

  std::optional<Enrolment> Find(const std::string& agent_id) const;
  std::map<std::string, Enrolment> Snapshot() const;
  // `ring agent remove`: the credential stops working; the id may enrol
  // again with the cluster token. kNotFound when never enrolled.
  Status Revoke(const std::string& agent_id);
  // `ring agent allow-slots`: its hellos may offer up to `slots` from its
  // next connection. kNotFound, kInvalidArgument.
  Status AllowSlots(const std::string& agent_id, int64_t slots);
  // `ring master rotate-cluster-token`: a new token in the cluster token
  // file (0600, replaced atomically); the old one enrols nothing from now
  // on. Enrolled agents keep their credentials. Returns the new token.
  Result<std::string> RotateClusterToken();
  const std::string& cluster_token_file() const { return cluster_token_file_; }

  void Count(AgentRefusal why) const;

 private:
  Status Put(const std::string& agent_id, const Enrolment& e);  // store, then memory; under mu_

  Store& store_;
  const std::string cluster_token_file_;
  const AgentRefusalCounter count_;
  mutable std::mutex mu_;                        // guards everything below
  std::string cluster_token_;                    // the current one
  std::map<std::string, Enrolment> enrolments_;  // by agent id
};

}  // namespace ring
