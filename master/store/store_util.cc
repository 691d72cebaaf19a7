#include "master/store/store_util.h"

#include <time.h>

#include <chrono>
#include <cstdio>

#include "master/store/store.h"

namespace ring {

std::string NowRfc3339() {
  return FormatRfc3339(std::chrono::system_clock::now());
}

std::string FormatRfc3339(std::chrono::system_clock::time_point now) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  time_t seconds = static_cast<time_t>(ms / 1000);
  int millis = static_cast<int>(ms % 1000);
  if (millis < 0) {  // before 1970: floor, not truncate
    millis += 1000;
    --seconds;
  }
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char buf[80];  // ample for any int fields, so the format cannot truncate
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
  return buf;
}

Status CheckPage(int64_t limit, int64_t offset) {
  if (limit < 0) return InvalidArgument("limit must not be negative, got " + std::to_string(limit));
  if (offset < 0) return InvalidArgument("offset must not be negative, got " + std::to_string(offset));
  return Status::Ok();
}

std::string EndedAt(bool terminal, const std::string& given, const std::string& stored,
                    const std::string& now) {
  if (!given.empty()) return given;
  if (!terminal) return {};
  return stored.empty() ? now : stored;
}

bool IsKnown(RunState s) {
  return ParseRunState(ToString(s)).has_value();
}
bool IsKnown(AllocationState s) {
  return ParseAllocationState(ToString(s)).has_value();
}

bool IsKnown(AgentState s) {
  return ParseAgentState(ToString(s)).has_value();
}

Status CheckUnixIds(const std::optional<UserUnixAccount>& account) {
  constexpr int64_t kMaxId = 4294967294;
  if (!account) return Status::Ok();
  if (account->uid < 1 || account->uid > kMaxId || account->gid < 1 || account->gid > kMaxId)
    return InvalidArgument("a linked Unix account's uid and gid must be 1 to 4294967294");
  return Status::Ok();
}

}  // namespace ring
