#pragma once
// Hands out MASTER_PORT values so concurrent allocations never share one.
#include <map>
#include <set>
#include <string>

namespace ring {

class PortRegistry {
 public:
  explicit PortRegistry(int first = 29500, int count = 1000) : first_(first), count_(count) {}
  // The lowest free port, held for `owner`; 0 when all are taken.
  int Acquire(const std::string& owner);
  void Release(const std::string& owner);

 private:
  int first_;
  int count_;
  std::map<std::string, int> by_owner_;
  std::set<int> used_;
};

}  // namespace ring
