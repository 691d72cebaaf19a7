#include "common/searcher/hparam_sampler.h"

#include <cmath>

namespace ring::search {
namespace {

using Type = Hyperparameter::Type;

nlohmann::json SampleOne(const Hyperparameter& h, Rng& rng) {
  switch (h.type) {
    case Type::kConst:
      return h.value;
    case Type::kInt:
      return rng.UniformInt(static_cast<int64_t>(h.minval), static_cast<int64_t>(h.maxval));
    case Type::kDouble:
      return rng.Uniform(h.minval, h.maxval);
    case Type::kLog:
      return std::pow(h.base, rng.Uniform(h.minval, h.maxval));
    case Type::kCategorical:
      return h.vals.at(static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(h.vals.size()) - 1)));
    case Type::kNested:
      return SampleHparams(h.nested, rng);
  }
  return nullptr;
}

}  // namespace

nlohmann::json SampleHparams(const std::map<std::string, Hyperparameter>& space, Rng& rng) {
  auto out = nlohmann::json::object();
  for (const auto& [name, h] : space) out[name] = SampleOne(h, rng);  // std::map: sorted keys
  return out;
}

}  // namespace ring::search
