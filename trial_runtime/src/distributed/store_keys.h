#pragma once
// The limits every key-value store enforces, so that code tested against an
// in-memory or file store behaves the same against the master's.
#include <chrono>
#include <cstddef>
#include <string>

#include "ring/trial/kv_store.h"

namespace ring::trial::detail {

inline constexpr size_t kMaxKeyBytes = 256;
inline constexpr size_t kMaxValueBytes = size_t{4} << 20;

// Throws RendezvousError naming the key unless it is 1-256 characters of
// [A-Za-z0-9._:/-].
void CheckKey(const std::string& key);
// Throws RendezvousError naming the key when the value is over 4 MiB.
void CheckValue(const std::string& key, const KeyValueStore::Bytes& value);

// The time until `deadline`, rounded up and never negative: a store's wait
// for it ends at or after the deadline, never just before.
std::chrono::milliseconds TimeLeft(std::chrono::steady_clock::time_point deadline);

// "5 s", "1500 ms": for messages about waits.
std::string DescribeTimeout(std::chrono::milliseconds timeout);

}  // namespace ring::trial::detail
