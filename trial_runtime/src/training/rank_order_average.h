#pragma once
// Averages a float buffer over a group so that every element is summed in
// rank order, whatever the buffer's length or offset: both gradient
// reducers use it where the group's own allreduce does not promise that
// (ProcessGroup::allreduce_order_fixed()), so a gradient's average does not
// depend on how the gradients were cut into buckets or pieces.
#include <cstddef>
#include <vector>

#include "ring/trial/distributed.h"

namespace ring::trial::detail {

class RankOrderAverage {
 public:
  // In place over `count` elements: one allreduce where the group's order
  // is fixed, else a reduce_scatter (rank order) and an allgather.
  void operator()(ProcessGroup& group, float* data, size_t count, Timeout timeout);

 private:
  std::vector<float> padded_, block_;  // grown on demand, kept for the next call
};

}  // namespace ring::trial::detail
