#include "common/searcher/hparam_grid.h"

#include <cmath>

namespace ring::search {
namespace {

using Type = Hyperparameter::Type;

// `count` evenly spaced values from lo to hi with both ends exact.
std::vector<double> Spaced(double lo, double hi, int64_t count) {
  if (count == 1) return {(lo + hi) / 2};
  std::vector<double> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out.push_back(i == count - 1 ? hi
                                 : lo + static_cast<double>(i) * (hi - lo) / static_cast<double>(count - 1));
  return out;
}

int64_t IntValueCount(const Hyperparameter& h) {
  const double integers = h.maxval - h.minval + 1;
  return static_cast<double>(*h.count) < integers ? *h.count : static_cast<int64_t>(integers);
}

int64_t SaturatingProduct(int64_t a, int64_t b) {
  const int64_t cap = kMaxGridPoints + 1;
  if (a == 0 || b == 0) return 0;
  return a > cap / b ? cap : std::min(a * b, cap);
}

}  // namespace

std::vector<nlohmann::json> GridValues(const Hyperparameter& h) {
  std::vector<nlohmann::json> out;
  switch (h.type) {
    case Type::kConst:
      out.push_back(h.value);
      break;
    case Type::kCategorical:
      out = h.vals;
      break;
    case Type::kInt: {
      if (!h.count) break;
      const int64_t count = IntValueCount(h);
      if (count > kMaxGridPoints) break;  // refused by validation before this is reached
      for (double v : Spaced(h.minval, h.maxval, count)) {
        const auto rounded = static_cast<int64_t>(std::round(v));
        if (out.empty() || out.back().get<int64_t>() != rounded) out.push_back(rounded);
      }
      break;
    }
    case Type::kDouble:
    case Type::kLog:
      if (!h.count || *h.count > kMaxGridPoints) break;
      for (double v : Spaced(h.minval, h.maxval, *h.count))
        out.push_back(h.type == Type::kLog ? std::pow(h.base, v) : v);
      break;
    case Type::kNested:
      out = GridPoints(h.nested);
      break;
  }
  return out;
}

int64_t GridSize(const std::map<std::string, Hyperparameter>& space) {
  int64_t size = 1;
  for (const auto& [name, h] : space) {
    int64_t n = 0;
    switch (h.type) {
      case Type::kConst:
        n = 1;
        break;
      case Type::kCategorical:
        n = static_cast<int64_t>(h.vals.size());
        break;
      case Type::kInt:
        n = h.count ? IntValueCount(h) : 0;
        break;
      case Type::kDouble:
      case Type::kLog:
        n = h.count ? *h.count : 0;
        break;
      case Type::kNested:
        n = GridSize(h.nested);
        break;
    }
    size = SaturatingProduct(size, std::min(n, kMaxGridPoints + 1));
  }
  return size;
}

std::vector<nlohmann::json> GridPoints(const std::map<std::string, Hyperparameter>& space) {
  std::vector<nlohmann::json> points{nlohmann::json::object()};
  // Extending each point by the next key (in sorted order) makes earlier keys vary slowest.
  for (const auto& [name, h] : space) {
    const auto values = GridValues(h);
    std::vector<nlohmann::json> next;
    next.reserve(points.size() * values.size());
    for (const auto& point : points) {
      for (const auto& value : values) {
        next.push_back(point);
        next.back()[name] = value;
      }
    }
    points = std::move(next);
  }
  return points;
}

}  // namespace ring::search
