#pragma once
// Element-wise reduction kernels of the shared-memory collectives, over the
// four DataTypes. kAverage reduces as kSum here; the caller divides once at
// the end (DivideInPlace).
#include <cstddef>
#include <span>

#include "ring/trial/distributed.h"

namespace ring::trial::shm {

// dst[i] = op(...op(op(dst[i], src[0][i]), src[1][i])...) for `count`
// elements: ReduceOrdered with the destination as the first operand.
void ReduceInto(void* dst, std::span<const void* const> sources, size_t count, DataType type, ReduceOp op);

// out[i] = op(...op(op(src[0][i], src[1][i]), src[2][i])..., src[n-1][i]) into
// every output: always folded left in the order of `sources`, whatever
// `count` and wherever the buffers start, so the same elements give the
// same bits however a tensor is split into calls. An output may be one of
// the sources (same elements), not overlap one otherwise.
void ReduceOrdered(std::span<void* const> outs, std::span<const void* const> sources, size_t count,
                   DataType type, ReduceOp op);

// data[i] /= divisor (floating types only).
void DivideInPlace(void* data, size_t count, DataType type, double divisor);

}  // namespace ring::trial::shm
