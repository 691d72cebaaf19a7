#pragma once
// What kind of task holds an allocation's slots. A trial belongs to an
// experiment and its searcher; the other kinds stand alone.
#include <optional>
#include <string_view>

namespace ring {

enum class TaskKind {
  kTrial,
  kCommand,
  kShell,
  kNotebook,
};

std::string_view ToString(TaskKind kind);  // "TRIAL", "COMMAND", ...
std::optional<TaskKind> ParseTaskKind(std::string_view text);

}  // namespace ring
