#include "training/bucket_plan.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>

namespace ring::trial::detail {
namespace {

uintptr_t Begin(std::span<float> s) {
  return reinterpret_cast<uintptr_t>(s.data());
}
uintptr_t End(std::span<float> s) {
  return Begin(s) + s.size_bytes();
}

}  // namespace

void CheckGradients(const std::vector<std::span<float>>& gradients, size_t bucket_bytes) {
  if (bucket_bytes == 0) throw ReducerUsageError("gradient reducer bucket_bytes must be at least 1");
  if (gradients.empty()) throw ReducerUsageError("gradient reducer needs at least one gradient");
  for (size_t i = 0; i < gradients.size(); ++i)
    if (gradients[i].empty() || gradients[i].data() == nullptr)
      throw ReducerUsageError("gradient reducer: parameter " + std::to_string(i) + " has no elements");
  std::vector<size_t> by_address(gradients.size());
  std::iota(by_address.begin(), by_address.end(), 0);
  std::sort(by_address.begin(), by_address.end(),
            [&](size_t a, size_t b) { return Begin(gradients[a]) < Begin(gradients[b]); });
  for (size_t k = 1; k < by_address.size(); ++k) {
    const size_t a = by_address[k - 1], b = by_address[k];
    if (End(gradients[a]) > Begin(gradients[b]))
      throw ReducerUsageError("gradient reducer: the buffers of parameters " +
                              std::to_string(std::min(a, b)) + " and " + std::to_string(std::max(a, b)) +
                              " overlap");
  }
}

std::vector<ReducerBucket> PlanBuckets(const std::vector<std::span<float>>& gradients,
                                       size_t first_bucket_bytes, size_t bucket_bytes) {
  std::vector<ReducerBucket> buckets;
  size_t i = gradients.size();
  while (i > 0) {
    ReducerBucket bucket;
    bucket.last = i - 1;
    const size_t threshold =
        buckets.empty() ? std::max<size_t>(1, std::min(first_bucket_bytes, bucket_bytes)) : bucket_bytes;
    size_t bytes = 0;
    while (i > 0 && bytes < threshold) {
      --i;
      bytes += gradients[i].size_bytes();
      bucket.elements += gradients[i].size();
    }
    bucket.first = i;
    bucket.in_place = true;
    for (size_t j = bucket.first; j < bucket.last; ++j)
      if (End(gradients[j]) != Begin(gradients[j + 1])) bucket.in_place = false;
    buckets.push_back(bucket);
  }
  return buckets;
}

}  // namespace ring::trial::detail
