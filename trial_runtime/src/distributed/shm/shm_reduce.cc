// The reduction kernels run over whole 64-byte vectors (GCC vector
// extensions: one AVX-512 register, two AVX2 or four SSE registers), built
// once per instruction set and picked when the library loads
// (target_clones), so one binary uses the widest the processor has.
//
// A vector is loaded from every source, folded left in source order and
// stored to every output before the next: an output may be one of the
// sources (the same elements) without a copy through a buffer, and an
// element's result is the scalar fold's, bit for bit, since the operations
// are element-wise and never reassociated.
#include "distributed/shm/shm_reduce.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

// The vectors never cross a call that is not inlined, so no ABI is at stake.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ring::trial::shm {
namespace {

constexpr size_t kVectorBytes = 64;

template <typename T>
struct VectorOf {
  typedef T type __attribute__((vector_size(kVectorBytes)));
};

struct Sum {
  template <typename V>
  [[gnu::always_inline]] static V Apply(V a, V b) {
    return a + b;
  }
};
struct Min {
  template <typename V>
  [[gnu::always_inline]] static V Apply(V a, V b) {
    return b < a ? b : a;
  }
};
struct Max {
  template <typename V>
  [[gnu::always_inline]] static V Apply(V a, V b) {
    return a < b ? b : a;
  }
};

template <typename V>
[[gnu::always_inline]] inline V Load(const std::byte* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename V>
[[gnu::always_inline]] inline void Store(std::byte* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// outs[o][i] = fold(sources[0][i], sources[1][i], ...) over `count` elements.
template <typename T, typename Op>
[[gnu::always_inline]] inline void Fold(std::span<void* const> outs, std::span<const void* const> sources,
                                        size_t count) {
  using V = typename VectorOf<T>::type;
  const size_t bytes = count * sizeof(T);
  const size_t whole = bytes / kVectorBytes * kVectorBytes;
  const auto* s0 = static_cast<const std::byte*>(sources[0]);
  if (sources.size() == 2 && outs.size() <= 2) {
    // Two ranks, the common case, with nothing in the loop but the fold.
    const auto* s1 = static_cast<const std::byte*>(sources[1]);
    auto* o0 = static_cast<std::byte*>(outs[0]);
    if (outs.size() == 1) {
      for (size_t at = 0; at < whole; at += kVectorBytes)
        Store(o0 + at, Op::Apply(Load<V>(s0 + at), Load<V>(s1 + at)));
    } else {
      auto* o1 = static_cast<std::byte*>(outs[1]);
      for (size_t at = 0; at < whole; at += kVectorBytes) {
        const V v = Op::Apply(Load<V>(s0 + at), Load<V>(s1 + at));
        Store(o0 + at, v);
        Store(o1 + at, v);
      }
    }
  } else {
    for (size_t at = 0; at < whole; at += kVectorBytes) {
      V v = Load<V>(s0 + at);
      for (size_t k = 1; k < sources.size(); ++k)
        v = Op::Apply(v, Load<V>(static_cast<const std::byte*>(sources[k]) + at));
      for (void* out : outs) Store(static_cast<std::byte*>(out) + at, v);
    }
  }
  for (size_t i = whole / sizeof(T); i < count; ++i) {
    T v = static_cast<const T*>(sources[0])[i];
    for (size_t k = 1; k < sources.size(); ++k) v = Op::Apply(v, static_cast<const T*>(sources[k])[i]);
    for (void* out : outs) static_cast<T*>(out)[i] = v;
  }
}

template <typename T>
[[gnu::always_inline]] inline void FoldTyped(std::span<void* const> outs,
                                             std::span<const void* const> sources, size_t count,
                                             ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      return Fold<T, Sum>(outs, sources, count);
    case ReduceOp::kMin:
      return Fold<T, Min>(outs, sources, count);
    case ReduceOp::kMax:
      return Fold<T, Max>(outs, sources, count);
  }
}

template <typename T>
[[gnu::always_inline]] inline void Divide(void* data, size_t count, double divisor) {
  using V = typename VectorOf<T>::type;
  auto* bytes = static_cast<std::byte*>(data);
  const T by = static_cast<T>(divisor);
  const size_t whole = count * sizeof(T) / kVectorBytes * kVectorBytes;
  for (size_t at = 0; at < whole; at += kVectorBytes) Store(bytes + at, Load<V>(bytes + at) / by);
  for (size_t i = whole / sizeof(T); i < count; ++i) static_cast<T*>(data)[i] /= by;
}

}  // namespace

[[gnu::target_clones("avx512f", "avx2", "default")]] void ReduceOrdered(std::span<void* const> outs,
                                                                        std::span<const void* const> sources,
                                                                        size_t count, DataType type,
                                                                        ReduceOp op) {
  switch (type) {
    case DataType::kFloat32:
      return FoldTyped<float>(outs, sources, count, op);
    case DataType::kFloat64:
      return FoldTyped<double>(outs, sources, count, op);
    case DataType::kInt32:
      return FoldTyped<int32_t>(outs, sources, count, op);
    case DataType::kInt64:
      return FoldTyped<int64_t>(outs, sources, count, op);
  }
}

void ReduceInto(void* dst, std::span<const void* const> sources, size_t count, DataType type, ReduceOp op) {
  // The destination is the first operand of the fold (no allocation for
  // the few sources a host has).
  constexpr size_t kOnStack = 16;
  std::array<const void*, kOnStack> fixed;
  std::vector<const void*> grown;
  std::span<const void*> all;
  if (sources.size() + 1 <= kOnStack) {
    all = std::span<const void*>(fixed.data(), sources.size() + 1);
  } else {
    grown.resize(sources.size() + 1);
    all = grown;
  }
  all[0] = dst;
  std::copy(sources.begin(), sources.end(), all.begin() + 1);
  const std::array<void*, 1> outs = {dst};
  ReduceOrdered(outs, all, count, type, op);
}

[[gnu::target_clones("avx512f", "avx2", "default")]] void DivideInPlace(void* data, size_t count,
                                                                        DataType type, double divisor) {
  if (type == DataType::kFloat32) Divide<float>(data, count, divisor);
  if (type == DataType::kFloat64) Divide<double>(data, count, divisor);
}

}  // namespace ring::trial::shm
