#include "runtime_flags.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include "ring/trial/errors.h"

namespace ring::trial {
namespace {

template <typename T>
T ParseNumber(const std::string& flag, const std::string& text) {
  T value{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size())
    throw ConfigError(flag + " expects a whole number, got \"" + text + "\"");
  return value;
}

// Splits "key=value"; throws on a missing '=' or empty key.
std::pair<std::string, std::string> SplitAssignment(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--hparam expects key=value, got \"" + text + "\"");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

nlohmann::json ParseValue(const std::string& text) {
  auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return text;
  return parsed;
}

}  // namespace

RuntimeFlags ParseRuntimeFlags(int argc, const char* const* argv) {
  RuntimeFlags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i] ? argv[i] : "";
    std::string name = arg;
    std::optional<std::string> value;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    if (name != "--hparams" && name != "--hparam" && name != "--batches" && name != "--seed" &&
        name != "--checkpoint-dir" && name != "--resume") {
      flags.remaining.push_back(arg);
      continue;
    }
    if (!value) {
      if (i + 1 >= argc) throw ConfigError(name + " expects a value");
      value = argv[++i];
    }
    flags.seen.push_back(name);
    if (name == "--hparams") {
      flags.hparams_file = *value;
    } else if (name == "--hparam") {
      SplitAssignment(*value);  // validates early
      flags.hparam_assignments.push_back(*value);
    } else if (name == "--checkpoint-dir") {
      flags.checkpoint_dir = *value;
    } else if (name == "--resume") {
      flags.resume = *value;
    } else if (name == "--batches") {
      flags.batches = ParseNumber<int64_t>(name, *value);
      if (*flags.batches < 0) throw ConfigError("--batches must not be negative");
    } else {
      flags.seed = ParseNumber<uint64_t>(name, *value);
    }
  }
  return flags;
}

nlohmann::json BuildLocalHparams(const RuntimeFlags& flags, nlohmann::json base) {
  if (!base.is_object()) base = nlohmann::json::object();
  if (flags.hparams_file) {
    std::ifstream in(*flags.hparams_file);
    if (!in) throw ConfigError("cannot read --hparams file " + *flags.hparams_file);
    std::stringstream text;
    text << in.rdbuf();
    auto file = nlohmann::json::parse(text.str(), nullptr, false);
    if (file.is_discarded() || !file.is_object())
      throw ConfigError("--hparams file " + *flags.hparams_file + " must hold a JSON object");
    base.merge_patch(file);
  }
  for (const auto& assignment : flags.hparam_assignments) {
    auto [key, text] = SplitAssignment(assignment);
    nlohmann::json* node = &base;
    size_t start = 0;
    for (;;) {
      auto dot = key.find('.', start);
      std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (part.empty()) throw ConfigError("--hparam key \"" + key + "\" has an empty part");
      if (dot == std::string::npos) {
        (*node)[part] = ParseValue(text);
        break;
      }
      nlohmann::json& child = (*node)[part];
      if (!child.is_object()) child = nlohmann::json::object();
      node = &child;
      start = dot + 1;
    }
  }
  return base;
}

}  // namespace ring::trial
