#include "common/experiment_config.h"

#include <algorithm>
#include <optional>

#include <yaml-cpp/depthguard.h>

#include "common/config_parser.h"

namespace ring {
namespace {

// Where the first byte that is not part of valid UTF-8 is (overlong forms,
// surrogates and code points past U+10FFFF included), if any.
std::optional<size_t> InvalidUtf8At(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || n > s.size() - i) return i;
    uint32_t cp = n == 1 ? c : c & (0x7fu >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto cont = static_cast<unsigned char>(s[i + k]);
      if ((cont & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (cont & 0x3fu);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return i;
    i += n;
  }
  return std::nullopt;
}

}  // namespace

const char* ToString(Length::Unit unit) {
  switch (unit) {
    case Length::Unit::kBatches:
      return "batches";
    case Length::Unit::kRecords:
      return "records";
    case Length::Unit::kEpochs:
      return "epochs";
  }
  return "batches";
}

const char* ToString(CheckpointPolicy policy) {
  switch (policy) {
    case CheckpointPolicy::kBest:
      return "best";
    case CheckpointPolicy::kAll:
      return "all";
    case CheckpointPolicy::kNone:
      return "none";
  }
  return "best";
}

std::string ConfigIssue::Text(const std::string& file_name) const {
  return file_name + ":" + std::to_string(line) + ": " + message;
}

std::string ConfigCheck::ErrorText() const {
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : "\n") + e.Text(file_name);
  return out;
}

nlohmann::json ConfigCheck::IssuesJson(const std::vector<ConfigIssue>& issues) const {
  auto out = nlohmann::json::array();
  for (const auto& i : issues)
    out.push_back({{"path", i.path}, {"line", i.line}, {"message", i.message}, {"text", i.Text(file_name)}});
  return out;
}

ConfigCheck CheckExperimentConfig(const std::string& yaml_text, const std::string& file_name) {
  ConfigCheck check;
  check.file_name = file_name;
  // A syntax error found at the end of the text (an unclosed bracket or
  // quote) is marked on the line after the last one; name the last line.
  const int lines = std::max<int>(1, static_cast<int>(std::count(yaml_text.begin(), yaml_text.end(), '\n')) +
                                         (!yaml_text.empty() && yaml_text.back() != '\n' ? 1 : 0));
  auto line_of = [&](const YAML::Mark& mark) { return std::clamp(mark.line + 1, 1, lines); };
  // Configs travel and are stored as JSON strings, which hold only UTF-8.
  if (const auto bad = InvalidUtf8At(yaml_text)) {
    const auto line =
        1 + std::count(yaml_text.begin(), yaml_text.begin() + static_cast<std::ptrdiff_t>(*bad), '\n');
    check.errors.push_back({"", static_cast<int>(line), "the config is not UTF-8 text (save it as UTF-8)"});
    return check;
  }
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::DeepRecursion& e) {  // its own message is a misleading "bad file"
    check.errors.push_back({"", line_of(e.mark), "invalid YAML: nested too deeply"});
    return check;
  } catch (const YAML::Exception& e) {
    check.errors.push_back({"", line_of(e.mark), "invalid YAML: " + e.msg});
    return check;
  }
  ConfigParser parser(file_name);
  std::optional<ExperimentConfig> config;
  try {
    config = parser.Parse(root);
  } catch (const ConfigError& e) {
    parser.walker().Record(e, "");
  } catch (const YAML::Exception& e) {
    parser.walker().errors().push_back({"", line_of(e.mark), e.msg});
  } catch (const std::exception& e) {  // user input never takes a daemon down
    parser.walker().errors().push_back({"", 1, std::string("cannot read the config: ") + e.what()});
  }
  check.errors = std::move(parser.walker().errors());
  check.warnings = std::move(parser.walker().warnings());
  std::stable_sort(check.errors.begin(), check.errors.end(),
                   [](const ConfigIssue& a, const ConfigIssue& b) { return a.line < b.line; });
  std::stable_sort(check.warnings.begin(), check.warnings.end(),
                   [](const ConfigIssue& a, const ConfigIssue& b) { return a.line < b.line; });
  if (check.errors.empty()) check.config = std::move(config);
  return check;
}

Result<ExperimentConfig> ParseExperimentConfig(const std::string& yaml_text, const std::string& file_name) {
  ConfigCheck check = CheckExperimentConfig(yaml_text, file_name);
  if (!check.errors.empty()) return Status(ErrorCode::kInvalidConfig, check.ErrorText());
  return std::move(*check.config);
}

}  // namespace ring
