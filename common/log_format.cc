#include "common/log_format.h"

#include <ctime>
#include <memory>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace ring {
namespace {

std::string Rfc3339(spdlog::log_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const time_t seconds = static_cast<time_t>(ms / 1000);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto level = spdlog::level::to_string_view(msg.level);
    const std::string line = JsonLogLine(Rfc3339(msg.time), std::string(level.data(), level.size()),
                                         std::string(msg.logger_name.data(), msg.logger_name.size()),
                                         std::string(msg.payload.data(), msg.payload.size()));
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

}  // namespace

std::string JsonLogLine(const std::string& ts, const std::string& level, const std::string& logger,
                        const std::string& msg) {
  nlohmann::ordered_json j = {{"ts", ts}, {"level", level}, {"logger", logger}, {"msg", msg}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Status UseLogFormat(const std::string& name, const std::string& format) {
  if (format != "text" && format != "json")
    return InvalidArgument("log format must be text or json, got \"" + format + "\"");
  spdlog::drop(name);
  auto logger = spdlog::stderr_color_mt(name);
  if (format == "json") logger->set_formatter(std::make_unique<JsonFormatter>());
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

}  // namespace ring
