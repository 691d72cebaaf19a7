#pragma once
// The patterns of a model folder's `.ringignore`, gitignore-like: one pattern
// per line, '#' comments, blank lines skipped, `*.o` matches a name at any
// depth, `build/` only folders, `/data` or `docs/*.md` (a slash) only from the
// root, `**/x` at any depth, and `!keep.o` re-includes; the last matching line
// wins. `**` between slashes matches a single folder level (fnmatch).
//
// IgnoreRules is an immutable value; any thread may use it.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ring {

class IgnoreRules {
 public:
  static IgnoreRules Parse(std::string_view text);
  // The rules of `file`; none when the file is missing.
  static IgnoreRules Load(const std::filesystem::path& file);

  // `rel` is a path relative to the root with '/' separators.
  bool Ignored(const std::string& rel, bool is_dir) const;
  bool empty() const { return rules_.empty(); }

 private:
  struct Rule {
    std::string pattern;
    bool negate = false;
    bool dir_only = false;
    bool anchored = false;   // matched against the whole relative path
    bool any_depth = false;  // `**/` prefix: matched against every trailing part of the path
  };
  static bool Matches(const Rule& rule, const std::string& rel);

  std::vector<Rule> rules_;
};

}  // namespace ring
