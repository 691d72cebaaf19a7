#pragma once
// The cluster token: the secret every agent presents when it connects
// (`ringagent --token-file FILE`). The master keeps it in a file only its user
// can read (0600), made with a fresh random token at first start.
#include <string>

#include "common/status.h"

namespace ring {

// Reads the token from `path`, or creates the file with a new token when it
// does not exist. Refuses a file that others may read or write, an empty
// one, and one whose token is shorter than 16 characters, naming the path.
Result<std::string> LoadOrCreateClusterToken(const std::string& path);

}  // namespace ring
