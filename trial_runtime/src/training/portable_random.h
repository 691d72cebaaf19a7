#pragma once
// The random numbers the data sampler shuffles with: published algorithms on
// 64-bit unsigned arithmetic only, so every platform and compiler gives the
// same sequence (unlike std::uniform_int_distribution, whose algorithm is
// left to the standard library).
#include <cstdint>

namespace ring::trial::detail {

// splitmix64's output function (Steele, Lea, Flood 2014).
constexpr uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class SplitMix64 {
 public:
  explicit constexpr SplitMix64(uint64_t state) : state_(state) {}
  constexpr uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    return Mix64(state_);
  }

 private:
  uint64_t state_;
};

// xoshiro256** 1.0 (Blackman, Vigna 2018).
class Xoshiro256StarStar {
 public:
  constexpr Xoshiro256StarStar(uint64_t s0, uint64_t s1, uint64_t s2, uint64_t s3) : s_{s0, s1, s2, s3} {}
  // Its four words from splitmix64, as the authors recommend.
  static constexpr Xoshiro256StarStar FromSeed(uint64_t seed) {
    SplitMix64 sm(seed);
    const uint64_t a = sm.next(), b = sm.next(), c = sm.next(), d = sm.next();
    return Xoshiro256StarStar(a, b, c, d);
  }

  constexpr uint64_t next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, bound), bound >= 1, without modulo bias: the
  // (2^64 - bound) mod bound lowest outputs are rejected.
  constexpr uint64_t below(uint64_t bound) {
    const uint64_t threshold = (0 - bound) % bound;
    for (;;) {
      const uint64_t r = next();
      if (r >= threshold) return r % bound;
    }
  }

 private:
  static constexpr uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace ring::trial::detail
