#pragma once
// How a GradientReducer groups gradients into buckets: a pure function of
// the gradient sizes, addresses and threshold, so that it can be checked
// before any thread or collective is involved.
#include <cstddef>
#include <span>
#include <vector>

#include "ring/trial/gradient_reducer.h"

namespace ring::trial::detail {

// Throws ReducerUsageError for no gradients, an empty or null one, two that
// overlap, or a zero threshold.
void CheckGradients(const std::vector<std::span<float>>& gradients, size_t bucket_bytes);

// Buckets from the last parameter backwards, each closed once it holds at
// least bucket_bytes (the first one: min(first_bucket_bytes, bucket_bytes));
// in_place when the bucket's buffers lie end to end in registration order.
std::vector<ReducerBucket> PlanBuckets(const std::vector<std::span<float>>& gradients,
                                       size_t first_bucket_bytes, size_t bucket_bytes);

}  // namespace ring::trial::detail
