#pragma once
// How the agents start an allocation's processes (docs/distributed.md): one
// per slot (Ringmaster's way), or one per node for all of that node's slots
// of the allocation, where a launcher such as `determined.launch` starts the
// workers (Determined's way). The master resolves kAuto before it starts
// anything: --launch flag > resources.launch > the pool's default > the
// entrypoint rule (ResolveLaunchMode).
#include <optional>
#include <string>
#include <string_view>

namespace ring {

enum class LaunchMode { kAuto, kPerSlot, kPerNode };

// "auto", "per_slot", "per_node".
std::string_view ToString(LaunchMode mode);
// Also accepts "per-slot" and "per-node" (the CLI flag's spelling).
std::optional<LaunchMode> ParseLaunchMode(std::string_view text);

// The entrypoint rule: per node when the entrypoint runs a determined.launch
// module (`python3 -m determined.launch.torch_distributed ...`), else per slot.
LaunchMode LaunchModeForEntrypoint(const std::string& entrypoint);

// The first of these that is not kAuto, then the entrypoint rule. `pool` is
// the resource pool's default (master.yaml resource_pools[].launch).
LaunchMode ResolveLaunchMode(LaunchMode config, LaunchMode pool, const std::string& entrypoint);

}  // namespace ring
