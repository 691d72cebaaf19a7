#include "common/searcher/rng.h"

#include <cstdio>
#include <limits>

#include "common/searcher/snapshot_json.h"

namespace ring::search {
namespace {

uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t RotateLeft(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

Rng::Rng(uint64_t seed) {
  // SplitMix64 never yields four zero words in a row, so the state is valid.
  for (auto& word : s_) word = SplitMix64(seed);
}

uint64_t Rng::Next() {
  const uint64_t result = RotateLeft(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = RotateLeft(s_[3], 45);
  return result;
}

int64_t Rng::UniformInt(int64_t lo, int64_t hi) {
  if (lo >= hi) return lo;
  // Width of the range minus one, computed without signed overflow.
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  uint64_t x = Next();
  if (span != std::numeric_limits<uint64_t>::max()) {
    const uint64_t n = span + 1;
    // 2^64 mod n values at the bottom would make some results likelier.
    const uint64_t threshold = (0 - n) % n;
    while (x < threshold) x = Next();
    x %= n;
  }
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + x);
}

double Rng::Uniform01() {
  return static_cast<double>(Next() >> 11) * 0x1.0p-53;
}

double Rng::Uniform(double lo, double hi) {
  if (!(lo < hi)) return lo;
  const double v = lo + (hi - lo) * Uniform01();
  return v < hi ? v : lo;  // rounding can land on hi itself
}

nlohmann::json Rng::ToJson() const {
  auto out = nlohmann::json::array();
  for (uint64_t word : s_) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(word));
    out.push_back(buf);
  }
  return out;
}

Rng Rng::FromJson(const nlohmann::json& j) {
  if (!j.is_array() || j.size() != 4) throw SnapshotError("rng must be a list of four hex words");
  Rng r;
  bool all_zero = true;
  for (size_t i = 0; i < 4; ++i) {
    if (!j[i].is_string()) throw SnapshotError("rng words must be strings");
    const auto& text = j[i].get_ref<const std::string&>();
    if (text.size() != 16) throw SnapshotError("rng words must have 16 hex digits");
    uint64_t word = 0;
    for (char c : text) {
      int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (digit < 0) throw SnapshotError("rng words must be lowercase hex");
      word = (word << 4) | static_cast<uint64_t>(digit);
    }
    r.s_[i] = word;
    all_zero = all_zero && word == 0;
  }
  if (all_zero) throw SnapshotError("rng state must not be all zero");
  return r;
}

}  // namespace ring::search
