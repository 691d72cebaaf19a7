#pragma once
// The master's composition root: owns the store, the lifecycle core, the
// REST router, the agent channel and the HTTP server, in dependency order,
// and runs them on a small pool of io threads until SIGTERM.
#include <memory>

#include "common/status.h"
#include "master/master_config.h"

namespace ring {

class Master {
 public:
  explicit Master(MasterConfig config);
  ~Master();
  // Blocks until SIGTERM or SIGINT; returns the reason it could not start.
  Status Run();

 private:
  struct Parts;
  MasterConfig config_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace ring
