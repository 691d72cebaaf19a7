#pragma once
// Network namespaces for multi-host tests (deploy/netns-cluster.sh): one
// namespace per node, each with its own address on a bridge that stays in
// the test's namespace, so the test reaches every node. Everything is torn
// down when the object goes away.
#include <string>
#include <vector>

namespace ring::testing {

class NetnsCluster {
 public:
  // Why namespaces cannot be made here (not root, no ip, ...); empty when they can.
  static std::string WhyUnavailable();

  // `nodes` namespaces; `rate` (e.g. "1gbit") limits what each node sends.
  explicit NetnsCluster(int nodes, const std::string& rate = "");
  ~NetnsCluster();
  NetnsCluster(const NetnsCluster&) = delete;
  NetnsCluster& operator=(const NetnsCluster&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }  // why `up` failed
  const std::string& address(int node) const { return addresses_.at(node); }
  // The command that runs a program inside node `node`: {"ip", "netns", "exec", NAME}.
  std::vector<std::string> launcher(int node) const;

 private:
  std::string name_;
  std::vector<std::string> addresses_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace ring::testing
