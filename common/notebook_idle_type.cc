#include "common/notebook_idle_type.h"

namespace ring {

std::string_view ToString(NotebookIdleType type) {
  switch (type) {
    case NotebookIdleType::kKernelsOrTerminals:
      return "kernels_or_terminals";
    case NotebookIdleType::kKernelConnections:
      return "kernel_connections";
    case NotebookIdleType::kActivity:
      return "activity";
  }
  return "kernels_or_terminals";
}

std::optional<NotebookIdleType> ParseNotebookIdleType(std::string_view text) {
  for (auto type : {NotebookIdleType::kKernelsOrTerminals, NotebookIdleType::kKernelConnections,
                    NotebookIdleType::kActivity})
    if (ToString(type) == text) return type;
  return std::nullopt;
}

}  // namespace ring
