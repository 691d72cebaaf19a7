#pragma once
// Puts an allocation's model definition into its work directory. The HTTP
// implementation (http_model_fetcher.h) downloads and unpacks it; tests use
// fakes. Fetch blocks: callers run it on a worker thread, never on the
// network thread. Implementations must be callable from several threads.
#include <string>

#include "common/agent_protocol.h"
#include "common/status.h"

namespace ring {

class ModelFetcher {
 public:
  virtual ~ModelFetcher() = default;
  // Fills `dest` (an existing, empty directory) with the model definition of `start`.
  virtual Status Fetch(const proto::Start& start, const std::string& dest) = 0;
};

}  // namespace ring
