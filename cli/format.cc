#include "cli/format.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace ring::cli {
namespace {

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void Flatten(const nlohmann::json& value, const std::string& prefix, std::string& out) {
  for (const auto& [key, child] : value.items()) {
    std::string name = prefix.empty() ? key : prefix + "." + key;
    if (child.is_object() && !child.empty()) {
      Flatten(child, name, out);
    } else {
      if (!out.empty()) out += ' ';
      out += name + "=" + FormatValue(child);
    }
  }
}

}  // namespace

std::string FormatValue(const nlohmann::json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return value.dump();
  if (value.is_number()) return FormatNumber(value.get<double>());
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  return value.dump();
}

std::string Field(const nlohmann::json& object, const std::string& key) {
  if (!object.is_object()) return "-";
  auto it = object.find(key);
  return it == object.end() ? "-" : FormatValue(*it);
}

std::string FormatHparams(const nlohmann::json& hparams) {
  if (!hparams.is_object()) return FormatValue(hparams);
  std::string out;
  Flatten(hparams, "", out);
  return out.empty() ? "-" : out;
}

std::string FormatMetrics(const nlohmann::json& metrics) {
  return FormatHparams(metrics);
}

std::string FormatBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  }
  return buf;
}

std::string FormatProgress(const nlohmann::json& progress) {
  if (!progress.is_number()) return "-";
  double p = progress.get<double>();
  if (p <= 1.0) p *= 100;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", std::floor(p));
  return buf;
}

std::string GetString(const nlohmann::json& object, const std::string& key, const std::string& fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

int64_t GetInt(const nlohmann::json& object, const std::string& key, int64_t fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return fallback;
  return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
}

const nlohmann::json& Member(const nlohmann::json& object, const std::string& key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::optional<uint64_t> ParseByteSize(const std::string& text) {
  uint64_t number = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || ptr == text.data()) return std::nullopt;
  std::string unit(ptr, text.data() + text.size());
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (unit.empty() || unit == "B") {
    shift = 0;
  } else if (unit == "K" || unit == "KB" || unit == "KIB") {
    shift = 10;
  } else if (unit == "M" || unit == "MB" || unit == "MIB") {
    shift = 20;
  } else if (unit == "G" || unit == "GB" || unit == "GIB") {
    shift = 30;
  } else {
    return std::nullopt;
  }
  if (shift && number > (UINT64_MAX >> shift)) return std::nullopt;
  return number << shift;
}

}  // namespace ring::cli
