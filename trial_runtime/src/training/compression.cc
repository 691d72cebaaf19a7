#include "training/compression.h"

#include <immintrin.h>

#include <bit>
#include <cmath>

namespace ring::trial::detail {
namespace {

// F16C converts 8 values an instruction; without it (or for the tail) the
// portable conversions below give the same results (round to nearest even).
bool HasF16c() {
  static const bool has = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return has;
}

__attribute__((target("avx,f16c"))) size_t CompressHalfF16c(const float* in, float* residual, uint16_t* out,
                                                            size_t n) {
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 v = _mm256_add_ps(_mm256_loadu_ps(in + j), _mm256_loadu_ps(residual + j));
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), h);
    _mm256_storeu_ps(residual + j, _mm256_sub_ps(v, _mm256_cvtph_ps(h)));
  }
  return j;
}

__attribute__((target("avx,f16c"))) size_t SumHalfF16c(const uint16_t* sent, size_t stride, int ranks,
                                                       float scale, float* out, size_t n) {
  size_t j = 0;
  const __m256 by = _mm256_set1_ps(scale);
  for (; j + 8 <= n; j += 8) {
    __m256 sum = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sent + j)));
    for (int r = 1; r < ranks; ++r)
      sum = _mm256_add_ps(
          sum, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sent + r * stride + j))));
    _mm256_storeu_ps(out + j, _mm256_mul_ps(sum, by));
  }
  return j;
}

float Widen(GradientCompression kind, uint16_t h) {
  return kind == GradientCompression::kFloat16 ? FromHalf(h) : FromBFloat16(h);
}

}  // namespace

uint16_t ToHalf(float v) {
  const uint32_t x = std::bit_cast<uint32_t>(v);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to infinity
  if (abs < 0x38800000u) {                                               // subnormal or zero in half
    const float magnitude = std::bit_cast<float>(abs);
    // Half subnormals are multiples of 2^-24: scale and round to nearest even.
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(magnitude * 16777216.0f)));
  }
  const uint32_t rebias = abs - 0x38000000u;  // exponent 127 -> 15
  const uint32_t half = rebias >> 13;
  const uint32_t rest = rebias & 0x1fffu;
  const uint32_t round = rest > 0x1000u || (rest == 0x1000u && (half & 1u)) ? 1u : 0u;
  return static_cast<uint16_t>(sign | (half + round));
}

float FromHalf(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) / 16777216.0f;
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t ToBFloat16(float v) {
  const uint32_t x = std::bit_cast<uint32_t>(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN stays NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float FromBFloat16(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

void Compress(GradientCompression kind, const float* in, float* residual, uint16_t* out, size_t n) {
  size_t j = 0;
  if (kind == GradientCompression::kFloat16 && HasF16c()) j = CompressHalfF16c(in, residual, out, n);
  for (; j < n; ++j) {
    const float v = in[j] + residual[j];
    out[j] = kind == GradientCompression::kFloat16 ? ToHalf(v) : ToBFloat16(v);
    residual[j] = v - Widen(kind, out[j]);
  }
}

void SumWidened(GradientCompression kind, const uint16_t* sent, size_t stride, int ranks, float scale,
                float* out, size_t n) {
  size_t j = 0;
  if (kind == GradientCompression::kFloat16 && HasF16c()) j = SumHalfF16c(sent, stride, ranks, scale, out, n);
  for (; j < n; ++j) {
    float sum = Widen(kind, sent[j]);
    for (int r = 1; r < ranks; ++r) sum += Widen(kind, sent[static_cast<size_t>(r) * stride + j]);
    out[j] = sum * scale;
  }
}

}  // namespace ring::trial::detail
