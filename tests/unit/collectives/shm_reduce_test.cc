// The shared-memory reduction kernels against a plain scalar left fold:
// every type and operation, counts that end inside a vector, buffers that
// start off a vector boundary, an output that is one of the sources, and
// two outputs at once.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "distributed/shm/shm_reduce.h"

namespace ring::trial::shm {
namespace {

template <typename T>
T Fill(std::mt19937_64& random) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(std::uniform_real_distribution<double>(-1e3, 1e3)(random));
  else
    return static_cast<T>(std::uniform_int_distribution<int64_t>(-1000000, 1000000)(random));
}

template <typename T>
T Apply(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      return a + b;
    case ReduceOp::kMin:
      return b < a ? b : a;
    case ReduceOp::kMax:
      return a < b ? b : a;
  }
  return a;
}

template <typename T>
void CheckType(DataType type) {
  std::mt19937_64 random(7);
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
    for (size_t sources_count : {1, 2, 3, 5}) {
      for (size_t count : {0, 1, 15, 16, 17, 63, 1000, 4099}) {
        for (size_t offset : {0, 1, 3}) {
          SCOPED_TRACE(::testing::Message() << "sources " << sources_count << " count " << count << " offset "
                                            << offset << " op " << static_cast<int>(op));
          std::vector<std::vector<T>> data(sources_count, std::vector<T>(count + offset));
          for (auto& d : data)
            for (T& v : d) v = Fill<T>(random);
          if constexpr (std::is_floating_point_v<T>)
            if (count > 3) data[0][offset + 2] = std::numeric_limits<T>::quiet_NaN();
          std::vector<T> expected(count);
          for (size_t i = 0; i < count; ++i) {
            T v = data[0][offset + i];
            for (size_t k = 1; k < sources_count; ++k) v = Apply(op, v, data[k][offset + i]);
            expected[i] = v;
          }
          std::vector<const void*> sources;
          for (auto& d : data) sources.push_back(d.data() + offset);
          std::vector<T> second(count + offset);
          // Two outputs: the first source itself and a separate buffer.
          const std::array<void*, 2> outs = {data[0].data() + offset, second.data() + offset};
          ReduceOrdered(outs, sources, count, type, op);
          EXPECT_EQ(std::memcmp(expected.data(), data[0].data() + offset, count * sizeof(T)), 0);
          EXPECT_EQ(std::memcmp(expected.data(), second.data() + offset, count * sizeof(T)), 0);
        }
      }
    }
  }
}

TEST(ShmReduceTest, Float32MatchesTheScalarFoldBitForBit) {
  CheckType<float>(DataType::kFloat32);
}
TEST(ShmReduceTest, Float64MatchesTheScalarFoldBitForBit) {
  CheckType<double>(DataType::kFloat64);
}
TEST(ShmReduceTest, Int32MatchesTheScalarFold) {
  CheckType<int32_t>(DataType::kInt32);
}
TEST(ShmReduceTest, Int64MatchesTheScalarFold) {
  CheckType<int64_t>(DataType::kInt64);
}

TEST(ShmReduceTest, ReduceIntoFoldsTheDestinationFirst) {
  std::vector<float> dst = {1e8f, 1.0f, 3.0f}, a = {1.0f, 2.0f, -3.0f}, b = {-1e8f, 4.0f, 0.5f};
  const std::array<const void*, 2> sources = {a.data(), b.data()};
  ReduceInto(dst.data(), sources, dst.size(), DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(dst[0], (1e8f + 1.0f) + -1e8f);  // 0: the 1 is lost in the left fold
  EXPECT_EQ(dst[1], 7.0f);
  EXPECT_EQ(dst[2], 0.5f);
}

TEST(ShmReduceTest, DivideInPlaceDividesEveryElement) {
  std::vector<double> data(37);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<double>(i) * 3.0;
  DivideInPlace(data.data(), data.size(), DataType::kFloat64, 3.0);
  for (size_t i = 0; i < data.size(); ++i) EXPECT_EQ(data[i], static_cast<double>(i));
}

}  // namespace
}  // namespace ring::trial::shm
