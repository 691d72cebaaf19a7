#include "common/ringignore.h"

#include <fnmatch.h>

#include <fstream>
#include <sstream>

namespace ring {

IgnoreRules IgnoreRules::Parse(std::string_view text) {
  IgnoreRules out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    Rule r;
    if (line[0] == '!') {
      r.negate = true;
      line.erase(0, 1);
    }
    if (!line.empty() && line.back() == '/') {
      r.dir_only = true;
      line.pop_back();
    }
    if (line.rfind("**/", 0) == 0) {
      r.any_depth = true;
      line.erase(0, 3);
    } else if (!line.empty() && line[0] == '/') {
      r.anchored = true;
      line.erase(0, 1);
    }
    if (!r.any_depth && line.find('/') != std::string::npos) r.anchored = true;
    if (line.empty()) continue;
    r.pattern = std::move(line);
    out.rules_.push_back(std::move(r));
  }
  return out;
}

IgnoreRules IgnoreRules::Load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str());
}

bool IgnoreRules::Matches(const Rule& rule, const std::string& rel) {
  if (rule.anchored) return fnmatch(rule.pattern.c_str(), rel.c_str(), FNM_PATHNAME) == 0;
  if (rule.any_depth) {
    for (size_t start = 0;;) {
      if (fnmatch(rule.pattern.c_str(), rel.c_str() + start, FNM_PATHNAME) == 0) return true;
      const size_t slash = rel.find('/', start);
      if (slash == std::string::npos) return false;
      start = slash + 1;
    }
  }
  const size_t slash = rel.rfind('/');
  const std::string base = slash == std::string::npos ? rel : rel.substr(slash + 1);
  return fnmatch(rule.pattern.c_str(), base.c_str(), 0) == 0;
}

bool IgnoreRules::Ignored(const std::string& rel, bool is_dir) const {
  bool ignored = false;
  for (const auto& r : rules_) {
    if (r.dir_only && !is_dir) continue;
    if (r.negate != ignored) continue;  // only a rule that would change the answer matters
    if (Matches(r, rel)) ignored = !r.negate;
  }
  return ignored;
}

}  // namespace ring
