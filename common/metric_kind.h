#pragma once
// Which of a trial's metric series a report belongs to.
#include <optional>
#include <string_view>

namespace ring {

enum class MetricKind {
  kTraining,
  kValidation,
};

std::string_view ToString(MetricKind kind);  // "training", "validation"
std::optional<MetricKind> ParseMetricKind(std::string_view text);

}  // namespace ring
