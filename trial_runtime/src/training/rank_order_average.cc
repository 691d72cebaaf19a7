#include "training/rank_order_average.h"

#include <algorithm>

namespace ring::trial::detail {

void RankOrderAverage::operator()(ProcessGroup& group, float* data, size_t count, Timeout timeout) {
  if (group.allreduce_order_fixed()) {
    group.allreduce(data, count, DataType::kFloat32, ReduceOp::kAverage, timeout);
    return;
  }
  const auto n = static_cast<size_t>(group.size());
  const size_t block = (count + n - 1) / n;
  if (padded_.size() < block * n) padded_.resize(block * n);
  if (block_.size() < block) block_.resize(block);
  std::copy(data, data + count, padded_.begin());
  std::fill(padded_.begin() + static_cast<std::ptrdiff_t>(count),
            padded_.begin() + static_cast<std::ptrdiff_t>(block * n), 0.0f);
  group.reduce_scatter(padded_.data(), block_.data(), block, DataType::kFloat32, ReduceOp::kAverage, timeout);
  group.allgather(block_.data(), padded_.data(), block, DataType::kFloat32, timeout);
  std::copy(padded_.begin(), padded_.begin() + static_cast<std::ptrdiff_t>(count), data);
}

}  // namespace ring::trial::detail
