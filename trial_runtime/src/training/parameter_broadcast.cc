// BroadcastParameters: small parameters packed into one buffer per
// broadcast, large ones broadcast in place.
#include <algorithm>
#include <string>

#include "ring/trial/gradient_reducer.h"

namespace ring::trial {
namespace {

constexpr size_t kPackBytes = size_t{25} << 20;

}  // namespace

void BroadcastParameters(ProcessGroup& group, const std::vector<std::span<float>>& parameters, int root,
                         Timeout timeout) {
  if (root < 0 || root >= group.size())
    throw ReducerUsageError("BroadcastParameters: root " + std::to_string(root) +
                            " is not a rank of a group of " + std::to_string(group.size()));
  if (group.size() == 1) return;
  const bool is_root = group.rank() == root;
  std::vector<float> packed;
  std::vector<std::span<float>> in_pack;
  auto flush = [&] {
    if (packed.empty()) return;
    group.broadcast(packed.data(), packed.size(), DataType::kFloat32, root, timeout);
    if (!is_root) {
      const float* in = packed.data();
      for (auto p : in_pack) {
        std::copy_n(in, p.size(), p.begin());
        in += p.size();
      }
    }
    packed.clear();
    in_pack.clear();
  };
  for (auto p : parameters) {
    if (p.empty()) continue;
    if (p.size_bytes() >= kPackBytes) {
      group.broadcast(p.data(), p.size(), DataType::kFloat32, root, timeout);
      continue;
    }
    if ((packed.size() + p.size()) * sizeof(float) > kPackBytes) flush();
    if (is_root)
      packed.insert(packed.end(), p.begin(), p.end());
    else
      packed.resize(packed.size() + p.size());
    in_pack.push_back(p);
  }
  flush();
}

}  // namespace ring::trial
