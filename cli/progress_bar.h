#pragma once
// ProgressBar: a one-line bar redrawn in place with '\r' ("Uploading
// [#####.....] 45% 1.2 MiB / 2.7 MiB"). Draws nothing when disabled (the
// stream is not a terminal). Redraws at most every 100 ms. CLI thread only.
#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace ring::cli {

class ProgressBar {
 public:
  ProgressBar(std::ostream& out, std::string label, bool enabled);
  ~ProgressBar() { Finish(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void Update(uint64_t done, uint64_t total);
  // Ends the line if anything was drawn.
  void Finish();

 private:
  void Draw(uint64_t done, uint64_t total);

  std::ostream& out_;
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace ring::cli
