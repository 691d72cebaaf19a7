#include "master/maintenance/log_limiter.h"

#include <algorithm>

namespace ring {

std::vector<LogRecord> LogLimiter::Admit(const std::string& allocation_id, std::vector<LogRecord> lines,
                                         int64_t now_ms) {
  Bucket& b = buckets_[allocation_id];
  if (b.fresh) {
    b.fresh = false;
    b.tokens = limits_.burst_lines;
    b.bytes = limits_.burst_bytes;
    b.refilled_ms = now_ms;
  }
  if (now_ms > b.refilled_ms) {
    const double seconds = static_cast<double>(now_ms - b.refilled_ms) / 1000.0;
    b.tokens = std::min(limits_.burst_lines, b.tokens + limits_.lines_per_second * seconds);
    b.bytes = std::min(limits_.burst_bytes, b.bytes + limits_.bytes_per_second * seconds);
    b.refilled_ms = now_ms;
  }
  if (lines.empty()) return {};
  LogRecord notice = lines.front();  // the trial, allocation, rank and stream of this batch
  notice.line.clear();
  std::vector<LogRecord> admitted;
  admitted.reserve(lines.size() + 1);
  for (auto& line : lines) {
    if (b.tokens < 1) {
      ++b.dropped;
      continue;
    }
    if (line.line.size() > limits_.max_line_bytes) {
      const size_t cut = line.line.size() - limits_.max_line_bytes;
      line.line.resize(limits_.max_line_bytes);
      line.line += " [cut: " + std::to_string(cut) + " more bytes; lines are limited to " +
                   std::to_string(limits_.max_line_bytes) + " bytes (max_log_line_bytes)]";
    }
    const double size = static_cast<double>(line.line.size() + 1);
    if (b.bytes < size) {
      ++b.dropped;
      b.dropped_for_bytes = true;
      continue;
    }
    b.tokens -= 1;
    b.bytes -= size;
    admitted.push_back(std::move(line));
  }
  if (b.dropped > 0 && now_ms - b.noticed_ms >= 1000) {
    notice.stream = "stderr";
    notice.ts_ms = now_ms;
    notice.line = "[ringmaster] " + std::to_string(b.dropped) +
                  " log lines dropped: this allocation is over its limit of " +
                  (b.dropped_for_bytes ? std::to_string(static_cast<int64_t>(limits_.bytes_per_second)) +
                                             " bytes per second (log_bytes_per_second, bursts of " +
                                             std::to_string(static_cast<int64_t>(limits_.burst_bytes)) + ")"
                                       : std::to_string(static_cast<int64_t>(limits_.lines_per_second)) +
                                             " lines per second (log_lines_per_second, bursts of " +
                                             std::to_string(static_cast<int64_t>(limits_.burst_lines)) + ")");
    admitted.push_back(std::move(notice));
    b.dropped = 0;
    b.dropped_for_bytes = false;
    b.noticed_ms = now_ms;
  }
  return admitted;
}

}  // namespace ring
