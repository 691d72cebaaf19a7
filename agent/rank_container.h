#pragma once
// The container of one rank whose start has an image (docs/containers.md):
// it chooses the runtime, checks the bind mounts against the agent's own
// folders, makes the checkpoint folder, removes a container of its name an
// earlier agent left, takes the image from the store or pulls it, builds the
// launch, and stops and removes the container. Owned by its
// AllocationRunner: Prepare runs on a worker thread; the pull, when one is
// needed, is a process of its own that the runner starts and waits for on
// its strand (a pull may take many minutes: no worker thread waits for it);
// Spec runs on the strand after both; Stop and Remove run on worker threads.
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

  // Everything before the pull and the launch; an error ends the rank with
  // its message. Says whether the image must be pulled (PullSpec).
  Status Prepare(const UnixAccount& account);
  bool needs_pull() const { return needs_pull_; }
  const std::string& image() const { return start_.container->image; }
  const char* runtime_name() const { return runtime_ ? ToString(runtime_->kind) : ""; }
  // The pull's process (the runtime's pull, with the credentials' file when
  // the start has registry_auth); after Prepare said a pull is needed.
  ProcessSpec PullSpec() const;
  // After the pull's process ended, however: removes the credentials' file.
  void PullEnded() const;
  // The message of a pull that failed, from its exit and its last error line.
  std::string PullFailure(const ExitStatus& exit, const std::string& last_error) const;
  // The runtime's process for the rank's environment `env`, as `account`;
  // writes the rank's variables to its env file.
  ProcessSpec Spec(const Environment& env, const UnixAccount& account) const;
  // Stops the container: SIGTERM, SIGKILL after `grace`.
  void Stop(std::chrono::milliseconds grace) const;
  // Removes the container (when it is left) and its env file.
  void Remove() const;

 private:
  // Whether the image must be pulled; writes the credentials' file then.
  Status CheckImage();
  std::string AuthDir() const { return work_dir_ + ".auth"; }

  const RunnerContext& context_;
  const proto::Start& start_;
  const std::string work_dir_;
  const std::string name_;                    // ring-<allocation>.r<rank>
  const std::string ids_;                     // for logs
  const DetectedRuntime* runtime_ = nullptr;  // into context_.runtimes, set by Prepare
  bool needs_pull_ = false;                   // set by Prepare
};

}  // namespace ring
