#pragma once
// Cuts a byte stream into lines. A line longer than max_line bytes is emitted
// in max_line pieces so one runaway line cannot grow a buffer without bound.
// Not thread-safe; owned by whoever reads the stream.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ring {

class LineSplitter {
 public:
  static constexpr size_t kMaxLine = 64 * 1024;
  explicit LineSplitter(size_t max_line = kMaxLine) : max_line_(max_line) {}

  // Appends `data`; returns the lines it completed, without '\n'.
  std::vector<std::string> Feed(std::string_view data);
  // The unterminated rest (end of stream), if any.
  std::vector<std::string> Finish();

 private:
  size_t max_line_;
  std::string partial_;
};

}  // namespace ring
