#pragma once
// The searcher's source of randomness: xoshiro256** seeded through
// SplitMix64, with uniform integers and doubles computed here rather than by
// std:: distributions (whose results differ between standard libraries), so
// the same experiment seed gives the same trials on every platform. The state
// is four 64-bit words; it snapshots to JSON as hexadecimal strings, because
// JSON numbers are doubles and would lose bits.
#include <array>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace ring::search {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t Next();
  // Uniform in [lo, hi]; lo <= hi. Exact (rejection sampling, no modulo bias).
  int64_t UniformInt(int64_t lo, int64_t hi);
  // Uniform in [0, 1) with 53 random bits.
  double Uniform01();
  // Uniform in [lo, hi) (lo itself when lo == hi).
  double Uniform(double lo, double hi);

  // ["0123456789abcdef", ...]: the four words.
  nlohmann::json ToJson() const;
  // Throws SnapshotError (snapshot_json.h) unless `j` is four 16-digit hex
  // words, not all zero.
  static Rng FromJson(const nlohmann::json& j);

  bool operator==(const Rng&) const = default;

 private:
  Rng() = default;
  std::array<uint64_t, 4> s_{};
};

}  // namespace ring::search
