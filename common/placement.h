#pragma once
// Where an allocation runs: the slots it holds on one agent. An allocation
// has one placement per agent; the first holds rank 0.
#include <string>
#include <vector>

namespace ring {

struct Placement {
  std::string agent_id;
  std::vector<int> slot_ids;
  bool operator==(const Placement&) const = default;
};

}  // namespace ring
