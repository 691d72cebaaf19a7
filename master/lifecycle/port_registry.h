#pragma once
// Hands out MASTER_PORT values so concurrent allocations never share one.
// Ports go round the range from a random starting point instead of always
// the lowest free one: an allocation restarted after a failure gets another
// port than its previous attempt, whose rank 0 may still hold the old one
// while it exits, and two masters whose trials share hosts (or a user's own
// torchrun on 29500) rarely pick the same port at the same time.
#include <map>
#include <set>
#include <string>

namespace ring {

class PortRegistry {
 public:
  // `start` is the offset in the range of the first port handed out; a
  // negative one is drawn at random.
  explicit PortRegistry(int first = 29500, int count = 1000, int start = -1);
  // The next free port after the last one handed out, held for `owner` (the
  // same one again for an owner that holds one); 0 when all are taken.
  int Acquire(const std::string& owner);
  void Release(const std::string& owner);

 private:
  int first_;
  int count_;
  int next_;  // offset in the range where the next search starts
  std::map<std::string, int> by_owner_;
  std::set<int> used_;
};

}  // namespace ring
