#pragma once
// 16-bit gradient compression with error feedback, for the PriorityReducer:
// each rank sends its gradient plus what rounding lost last time, rounded to
// float16 or bfloat16, keeps the new rounding error for the next step, and
// sums what every rank sent in float32, in rank order.
#include <cstddef>
#include <cstdint>

#include "ring/trial/priority_reducer.h"

namespace ring::trial::detail {

// out[j] = round(in[j] + residual[j]); residual[j] = (in[j] + residual[j]) - out[j].
void Compress(GradientCompression kind, const float* in, float* residual, uint16_t* out, size_t n);

// out[j] = (sum over r in rank order of widen(sent[r * stride + j])) * scale.
void SumWidened(GradientCompression kind, const uint16_t* sent, size_t stride, int ranks, float scale,
                float* out, size_t n);

// Exposed for tests: one value each way.
uint16_t ToHalf(float v);
float FromHalf(uint16_t h);
uint16_t ToBFloat16(float v);
float FromBFloat16(uint16_t h);

}  // namespace ring::trial::detail
