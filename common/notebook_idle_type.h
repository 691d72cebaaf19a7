#pragma once
// Determined's notebook_idle_type: what makes a notebook idle, so that its
// idle_timeout ends it (docs/interactive.md "Notebooks").
#include <optional>
#include <string_view>

namespace ring {

enum class NotebookIdleType {
  kKernelsOrTerminals,  // idle: no kernel, no terminal and no session runs (the default)
  kKernelConnections,   // idle: no kernel has a client connected (no browser tab on a notebook)
  kActivity,            // idle: no kernel is busy and no kernel or terminal did anything since the last look
};

std::string_view ToString(NotebookIdleType type);  // "kernels_or_terminals", ...
std::optional<NotebookIdleType> ParseNotebookIdleType(std::string_view text);

}  // namespace ring
