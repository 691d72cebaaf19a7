#include "common/metric_kind.h"

#include <array>
#include <utility>

namespace ring {
namespace {

constexpr std::array<std::pair<MetricKind, std::string_view>, 2> kMetricKindNames{{
    {MetricKind::kTraining, "training"},
    {MetricKind::kValidation, "validation"},
}};

}  // namespace

std::string_view ToString(MetricKind kind) {
  for (const auto& [k, name] : kMetricKindNames)
    if (k == kind) return name;
  return "unknown";
}

std::optional<MetricKind> ParseMetricKind(std::string_view text) {
  for (const auto& [k, name] : kMetricKindNames)
    if (name == text) return k;
  return std::nullopt;
}

}  // namespace ring
