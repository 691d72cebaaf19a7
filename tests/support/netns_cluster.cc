#include "tests/support/netns_cluster.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace ring::testing {
namespace {

std::string Script() {
  return SourceDir() + "/deploy/netns-cluster.sh";
}

// A subnet no other cluster of this host uses now (tests run concurrently).
std::string FreeSubnet() {
  std::string used;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/run/ring-netns", ec))
    used += ReadFileText((entry.path() / "subnet").string()) + " ";
  for (int i = 0; i < 250; ++i) {
    const std::string subnet = "10.213." + std::to_string((getpid() + i) % 250 + 1);
    if (used.find(subnet + "\n") == std::string::npos) return subnet;
  }
  return "10.213.251";
}

}  // namespace

std::string NetnsCluster::WhyUnavailable() {
  auto r = RunCommand({Script(), "check"});
  if (r.exit_code == 0) return "";
  return r.err.empty() ? "netns-cluster.sh check exited " + std::to_string(r.exit_code) : r.err;
}

NetnsCluster::NetnsCluster(int nodes, const std::string& rate)
    : name_("rt" + std::to_string(getpid() % 1000000)) {
  std::vector<std::string> argv = {Script(), "up", name_, std::to_string(nodes), "--subnet", FreeSubnet()};
  if (!rate.empty()) argv.insert(argv.end(), {"--rate", rate});
  auto r = RunCommand(argv);
  if (r.exit_code != 0) {
    error_ = r.err + r.out;
    return;
  }
  std::istringstream lines(r.out);  // "NAME-K ADDRESS" per node
  std::string ns, address;
  while (lines >> ns >> address) addresses_.push_back(address);
  ok_ = static_cast<int>(addresses_.size()) == nodes;
  if (!ok_) error_ = "unexpected output of netns-cluster.sh up: " + r.out;
}

NetnsCluster::~NetnsCluster() {
  RunCommand({Script(), "down", name_});
}

std::vector<std::string> NetnsCluster::launcher(int node) const {
  return {"ip", "netns", "exec", name_ + "-" + std::to_string(node)};
}

}  // namespace ring::testing
