#pragma once
// What the fake masters of the runtime tests answer to
// POST /api/v1/allocations/{id}/checkpoints/prepare: a new uuid each time,
// as the real master issues them before a checkpoint is written.
#include <atomic>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace ring::trial::testing_uuids {

inline bool IsPrepare(const std::string& target) {
  const std::string suffix = "/checkpoints/prepare";
  return target.size() > suffix.size() &&
         target.compare(target.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// {"uuid": "...-<n>"}, n counting up from 1 in this process.
inline std::string IssuedUuidBody() {
  static std::atomic<long long> next{1};
  char uuid[40];
  std::snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012lld", next++);
  return nlohmann::json{{"uuid", uuid}}.dump();
}

}  // namespace ring::trial::testing_uuids
