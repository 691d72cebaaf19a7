#include "common/task_kind.h"

#include <array>
#include <utility>

namespace ring {
namespace {

constexpr std::array<std::pair<TaskKind, std::string_view>, 4> kTaskKindNames{{
    {TaskKind::kTrial, "TRIAL"},
    {TaskKind::kCommand, "COMMAND"},
    {TaskKind::kShell, "SHELL"},
    {TaskKind::kNotebook, "NOTEBOOK"},
}};

}  // namespace

std::string_view ToString(TaskKind kind) {
  for (const auto& [k, name] : kTaskKindNames)
    if (k == kind) return name;
  return "UNKNOWN";
}

std::optional<TaskKind> ParseTaskKind(std::string_view text) {
  for (const auto& [k, name] : kTaskKindNames)
    if (name == text) return k;
  return std::nullopt;
}

}  // namespace ring
