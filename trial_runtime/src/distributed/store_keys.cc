#include "distributed/store_keys.h"

#include <algorithm>

#include "ring/trial/errors.h"

namespace ring::trial::detail {
namespace {

bool KeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == ':' || c == '/' || c == '-';
}

}  // namespace

void CheckKey(const std::string& key) {
  if (!key.empty() && key.size() <= kMaxKeyBytes && std::all_of(key.begin(), key.end(), KeyChar)) return;
  const std::string shown = key.size() > 80 ? key.substr(0, 80) + "..." : key;
  throw RendezvousError("rendezvous key \"" + shown + "\" (" + std::to_string(key.size()) +
                        " bytes) is invalid: keys are 1 to 256 characters of A-Z a-z 0-9 . _ : / -");
}

void CheckValue(const std::string& key, const KeyValueStore::Bytes& value) {
  if (value.size() <= kMaxValueBytes) return;
  throw RendezvousError("the value of rendezvous key " + key + " has " + std::to_string(value.size()) +
                        " bytes; values are at most " + std::to_string(kMaxValueBytes) + " bytes");
}

std::chrono::milliseconds TimeLeft(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return std::max(left, std::chrono::milliseconds(0));
}

std::string DescribeTimeout(std::chrono::milliseconds timeout) {
  const auto ms = timeout.count();
  if (ms >= 1000 && ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms) + " ms";
}

}  // namespace ring::trial::detail
