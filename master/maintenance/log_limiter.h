#pragma once
// Limits on what one allocation may write to the log store, whatever its
// agent sends: lines longer than max_line_bytes are cut (and say so), and
// lines beyond a token bucket of lines_per_second (holding up to burst_lines)
// or beyond one of bytes_per_second (holding up to burst_bytes) are dropped;
// the allocation's log then gets one notice per second saying how many were
// dropped and which limit did it. Pure: the caller passes the
// time, so tests drive it without sleeping.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "master/store/store.h"

namespace ring {

struct LogLimits {
  double lines_per_second = 1000;
  double burst_lines = 20000;
  size_t max_line_bytes = 64 * 1024;
  double bytes_per_second = 1 << 20;
  double burst_bytes = 16 << 20;
};

class LogLimiter {
 public:
  explicit LogLimiter(LogLimits limits = {}) : limits_(limits) {}

  // The lines of one batch of `allocation_id` that may be stored at now_ms,
  // cut where too long, with a notice line appended when lines were dropped.
  std::vector<LogRecord> Admit(const std::string& allocation_id, std::vector<LogRecord> lines,
                               int64_t now_ms);
  // The allocation ended: its bucket goes.
  void Forget(const std::string& allocation_id) { buckets_.erase(allocation_id); }

  const LogLimits& limits() const { return limits_; }

 private:
  struct Bucket {
    double tokens = 0;  // lines
    double bytes = 0;   // bytes of lines
    int64_t refilled_ms = 0;
    int64_t dropped = 0;             // since the last notice
    bool dropped_for_bytes = false;  // since the last notice, some by the byte limit
    int64_t noticed_ms = -1000;      // when the last notice was written
    bool fresh = true;
  };
  LogLimits limits_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace ring
