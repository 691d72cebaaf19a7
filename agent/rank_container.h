#pragma once
// The container of one rank whose start has an image (docs/containers.md):
// it chooses the runtime, checks the bind mounts against the agent's own
// folders, makes the checkpoint folder, removes a container of its name an
// earlier agent left, takes the image from the store or pulls it, builds the
// launch, and stops and removes the container. Owned by its
// AllocationRunner: Prepare runs on a worker thread before Spec runs on the
// runner's strand; Stop and Remove run on worker threads after both.
#include <chrono>
#include <string>

#include "agent/container_runtime.h"
#include "agent/process_launcher.h"
#include "agent/run_as.h"
#include "agent/trial_environment.h"
#include "common/agent_protocol.h"
#include "common/status.h"

namespace ring {

struct RunnerContext;

class RankContainer {
 public:
  // `context` and `start` outlive it (its runner's).
  RankContainer(const RunnerContext& context, const proto::Start& start, std::string work_dir);

  // Everything before the launch; an error ends the rank with its message.
  Status Prepare(const UnixAccount& account);
  // The runtime's process for the rank's environment `env`, as `account`;
  // writes the rank's variables to its env file.
  ProcessSpec Spec(const Environment& env, const UnixAccount& account) const;
  // Stops the container: SIGTERM, SIGKILL after `grace`.
  void Stop(std::chrono::milliseconds grace) const;
  // Removes the container (when it is left) and its env file.
  void Remove() const;

 private:
  Status PullImage();

  const RunnerContext& context_;
  const proto::Start& start_;
  const std::string work_dir_;
  const std::string name_;                    // ring-<allocation>.r<rank>
  const std::string ids_;                     // for logs
  const DetectedRuntime* runtime_ = nullptr;  // into context_.runtimes, set by Prepare
};

}  // namespace ring
