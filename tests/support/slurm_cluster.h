#pragma once
// A real Slurm for end-to-end tests: one private munged on the host, a
// slurmctld in a network namespace of its own and two slurmd ("n1", "n2"),
// each in its own network and UTS namespace (nsenter --net, not `ip netns
// exec`, which hides the cgroup mounts slurmd 22.05 needs), on a bridge
// whose host side (bridge_address(), SUBNET.1) is where a test's master
// listens so that the jobs' processes reach it. Configuration, spool, state,
// keys and logs live under `dir`; nothing under /etc is touched. Everything
// it started — daemons, namespaces, veths, the bridge — is stopped when it
// goes away, also when starting failed half way.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/held_port.h"
#include "tests/support/process.h"

namespace ring::testing {

class SlurmCluster {
 public:
  // Why a Slurm cluster cannot run here (not root, a program missing,
  // namespaces refused); empty when it can.
  static std::string WhyUnavailable();

  // Starts everything and waits until both nodes are idle (ok()), or records
  // why not (error()) and stops what it started.
  explicit SlurmCluster(const std::string& dir);
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  const std::string& conf() const { return conf_; }  // the private slurm.conf
  const std::string& partition() const { return partition_; }
  const std::vector<std::string>& nodes() const { return nodes_; }
  int cpus_per_node() const { return 2; }
  // The host side of the bridge: the only address a test's master binds.
  const std::string& bridge_address() const { return bridge_address_; }
  // The environment Slurm's commands need (SLURM_CONF).
  std::map<std::string, std::string> env() const { return {{"SLURM_CONF", conf_}}; }
  // Why slurmrestd cannot run here (not installed, no auth/jwt plugin);
  // empty when it can. slurm.conf then accepts tokens signed with jwt_key().
  static std::string WhyNoRestd();
  // The key slurmctld checks tokens with (0600); empty without the plugin.
  const std::string& jwt_key() const { return jwt_key_; }
  // Starts slurmrestd on 127.0.0.1 (once; it runs as nobody and takes
  // tokens only) and returns its URL, or "" with `why`.
  std::string StartRestd(std::string* why);
  // Runs a Slurm command (sinfo, squeue, scancel, ...) against this cluster.
  CommandResult Run(std::vector<std::string> argv,
                    std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // Waits until squeue lists no job.
  bool WaitIdle(std::chrono::milliseconds timeout) const;
  // The daemons' logs on stderr (call when a test fails).
  void DumpLogs() const;

 private:
  void Start();
  void Stop();

  std::string dir_;
  std::string name_;  // the namespaces' prefix (netns-cluster.sh NAME)
  std::string partition_ = "p";
  std::vector<std::string> nodes_ = {"n1", "n2"};
  std::string conf_;
  std::string bridge_address_;
  bool namespaces_up_ = false;
  std::string jwt_key_;
  std::unique_ptr<HeldPort> restd_port_;
  std::unique_ptr<ChildProcess> restd_;
  std::string restd_url_;
  std::unique_ptr<ChildProcess> munged_;
  std::unique_ptr<ChildProcess> slurmctld_;
  std::vector<std::unique_ptr<ChildProcess>> slurmds_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace ring::testing
