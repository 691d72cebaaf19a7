#pragma once
// Gloo's exception text without the "[file:line] " it starts with.
#include <string>

namespace ring::trial::detail {

inline std::string GlooMessage(const char* what) {
  std::string text(what);
  if (!text.empty() && text[0] == '[') {
    const auto end = text.find("] ");
    if (end != std::string::npos) text = text.substr(end + 2);
  }
  return text;
}

}  // namespace ring::trial::detail
