#include "common/launch_mode.h"

#include <sstream>

namespace ring {

std::string_view ToString(LaunchMode mode) {
  switch (mode) {
    case LaunchMode::kAuto:
      return "auto";
    case LaunchMode::kPerSlot:
      return "per_slot";
    case LaunchMode::kPerNode:
      return "per_node";
  }
  return "auto";
}

std::optional<LaunchMode> ParseLaunchMode(std::string_view text) {
  if (text == "auto") return LaunchMode::kAuto;
  if (text == "per_slot" || text == "per-slot") return LaunchMode::kPerSlot;
  if (text == "per_node" || text == "per-node") return LaunchMode::kPerNode;
  return std::nullopt;
}

LaunchMode LaunchModeForEntrypoint(const std::string& entrypoint) {
  // A word "-m" followed by a module of the determined.launch package.
  std::istringstream words(entrypoint);
  std::string word;
  bool module_next = false;
  while (words >> word) {
    if (module_next && (word == "determined.launch" || word.rfind("determined.launch.", 0) == 0))
      return LaunchMode::kPerNode;
    module_next = word == "-m";
  }
  return LaunchMode::kPerSlot;
}

LaunchMode ResolveLaunchMode(LaunchMode config, LaunchMode pool, const std::string& entrypoint) {
  if (config != LaunchMode::kAuto) return config;
  if (pool != LaunchMode::kAuto) return pool;
  return LaunchModeForEntrypoint(entrypoint);
}

}  // namespace ring
