#pragma once
// How the daemons write their logs to stderr: `text` (a timestamp, the level
// and the message, coloured on a terminal) or `json`, one object per line
// for log collectors: {"ts": "2026-11-24T13:01:02.345Z", "level": "info",
// "logger": "ringmaster", "msg": "..."}. Text that is not UTF-8 is replaced,
// never dropped.
#include <string>

#include "common/status.h"

namespace ring {

// Makes `name` the default spdlog logger with `format` ("text" or "json");
// kInvalidArgument for another format.
Status UseLogFormat(const std::string& name, const std::string& format);
// One JSON log line for the given fields (exposed for tests).
std::string JsonLogLine(const std::string& ts, const std::string& level, const std::string& logger,
                        const std::string& msg);

}  // namespace ring
