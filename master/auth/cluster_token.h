#pragma once
// The cluster token: the secret that enrols an agent (`ringagent
// --token-file FILE`, POST /api/v1/agents/enrol). Once enrolled, an agent
// connects with the credential of its own id instead (AgentEnrolments). The
// master keeps the token in a file only its user can read (0600), made with a
// fresh random token at first start and replaced by RotateClusterToken.
#include <string>

#include "common/status.h"

namespace ring {

// Reads the token from `path`, or creates the file with a new token when it
// does not exist. Refuses a file that others may read or write, an empty
// one, and one whose token is shorter than 16 characters, naming the path.
Result<std::string> LoadOrCreateClusterToken(const std::string& path);

// Writes a new random token to `path` (a temporary file made 0600, synced,
// then renamed over the old one, so readers see the old token or the new one
// and never a part) and returns it.
Result<std::string> RotateClusterToken(const std::string& path);

}  // namespace ring
