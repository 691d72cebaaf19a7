#pragma once
// One slot an agent offers: a CPU slot or a GPU. The agent says which in its
// hello; the master keeps them in its agents' records.
#include <string>

namespace ring::proto {

struct Slot {
  int id = 0;        // index on the agent, 0..N-1
  std::string type;  // "cpu" or "cuda"
  std::string uuid;  // GPU UUID for cuda slots, empty for cpu
  bool operator==(const Slot&) const = default;
};

}  // namespace ring::proto
