#include "distributed/shm/shm_reduce.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ring::trial::shm {
namespace {

constexpr size_t kBlockBytes = 8192;

template <typename T, typename Op>
void Fold(T* dst, std::span<const void* const> sources, size_t count, Op op) {
  constexpr size_t kBlock = kBlockBytes / sizeof(T);
  for (size_t begin = 0; begin < count; begin += kBlock) {
    const size_t n = std::min(kBlock, count - begin);
    T* __restrict d = dst + begin;
    for (const void* source : sources) {
      const T* __restrict s = static_cast<const T*>(source) + begin;
      for (size_t i = 0; i < n; ++i) d[i] = op(d[i], s[i]);
    }
  }
}

// acc = s0; acc = op(acc, s1); ... in the order of `sources`, one block at a
// time in a buffer on the stack (so an output may be one of the sources),
// then the block to every output.
template <typename T, typename Op>
void FoldOrdered(std::span<void* const> outs, std::span<const void* const> sources, size_t count, Op op) {
  constexpr size_t kBlock = kBlockBytes / sizeof(T);
  alignas(64) T acc[kBlock];
  for (size_t begin = 0; begin < count; begin += kBlock) {
    const size_t n = std::min(kBlock, count - begin);
    std::memcpy(acc, static_cast<const T*>(sources[0]) + begin, n * sizeof(T));
    for (size_t k = 1; k < sources.size(); ++k) {
      const T* __restrict s = static_cast<const T*>(sources[k]) + begin;
      for (size_t i = 0; i < n; ++i) acc[i] = op(acc[i], s[i]);
    }
    for (void* out : outs) std::memcpy(static_cast<T*>(out) + begin, acc, n * sizeof(T));
  }
}

template <typename T>
void ReduceOrderedTyped(std::span<void* const> outs, std::span<const void* const> sources, size_t count,
                        ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      return FoldOrdered<T>(outs, sources, count, [](T a, T b) { return a + b; });
    case ReduceOp::kMin:
      return FoldOrdered<T>(outs, sources, count, [](T a, T b) { return b < a ? b : a; });
    case ReduceOp::kMax:
      return FoldOrdered<T>(outs, sources, count, [](T a, T b) { return a < b ? b : a; });
  }
}

template <typename T>
void ReduceTyped(void* dst, std::span<const void* const> sources, size_t count, ReduceOp op) {
  T* d = static_cast<T*>(dst);
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      Fold(d, sources, count, [](T a, T b) { return a + b; });
      return;
    case ReduceOp::kMin:
      Fold(d, sources, count, [](T a, T b) { return b < a ? b : a; });
      return;
    case ReduceOp::kMax:
      Fold(d, sources, count, [](T a, T b) { return a < b ? b : a; });
      return;
  }
}

template <typename T>
void Divide(void* data, size_t count, double divisor) {
  T* d = static_cast<T*>(data);
  const T by = static_cast<T>(divisor);
  for (size_t i = 0; i < count; ++i) d[i] /= by;
}

}  // namespace

void ReduceInto(void* dst, std::span<const void* const> sources, size_t count, DataType type, ReduceOp op) {
  switch (type) {
    case DataType::kFloat32:
      return ReduceTyped<float>(dst, sources, count, op);
    case DataType::kFloat64:
      return ReduceTyped<double>(dst, sources, count, op);
    case DataType::kInt32:
      return ReduceTyped<int32_t>(dst, sources, count, op);
    case DataType::kInt64:
      return ReduceTyped<int64_t>(dst, sources, count, op);
  }
}

void ReduceOrdered(std::span<void* const> outs, std::span<const void* const> sources, size_t count,
                   DataType type, ReduceOp op) {
  switch (type) {
    case DataType::kFloat32:
      return ReduceOrderedTyped<float>(outs, sources, count, op);
    case DataType::kFloat64:
      return ReduceOrderedTyped<double>(outs, sources, count, op);
    case DataType::kInt32:
      return ReduceOrderedTyped<int32_t>(outs, sources, count, op);
    case DataType::kInt64:
      return ReduceOrderedTyped<int64_t>(outs, sources, count, op);
  }
}

void DivideInPlace(void* data, size_t count, DataType type, double divisor) {
  if (type == DataType::kFloat32) Divide<float>(data, count, divisor);
  if (type == DataType::kFloat64) Divide<double>(data, count, divisor);
}

}  // namespace ring::trial::shm
