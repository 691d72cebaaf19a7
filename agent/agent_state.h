#pragma once
// The agent's state folder (`state_dir` in agent.yaml, --state-dir): where it
// keeps the credential the master issued its id at enrolment. The folder is
// the agent user's alone (0700); the credential file is 0600 and replaced
// atomically. Also reads the cluster token file, which must be as private.
#include <optional>
#include <string>

#include "common/status.h"

namespace ring {

// Creates `dir` (0700) when missing; refuses one owned by another user or
// that group or others may write or enter, naming it.
Status PrepareStateDir(const std::string& dir);

// The credential of `agent_id` kept in `dir`, or nullopt when there is none
// (never enrolled, or enrolled under another id). A credential file others
// may read is refused.
Result<std::optional<std::string>> LoadCredential(const std::string& dir, const std::string& agent_id);
// Keeps the credential of `agent_id` in `dir` (a 0600 file, synced, renamed
// into place).
Status SaveCredential(const std::string& dir, const std::string& agent_id, const std::string& credential);
// Where the credential lives: <dir>/credential.
std::string CredentialPath(const std::string& dir);

// The cluster token in `path`: a regular file that group and others may not
// read or write (refused otherwise, saying how to fix it), not empty.
Result<std::string> ReadTokenFile(const std::string& path);

}  // namespace ring
