#include "cli/progress_bar.h"

#include <algorithm>

#include "cli/format.h"

namespace ring::cli {

constexpr int kBarWidth = 30;

ProgressBar::ProgressBar(std::ostream& out, std::string label, bool enabled)
    : out_(out), label_(std::move(label)), enabled_(enabled) {}

void ProgressBar::Update(uint64_t done, uint64_t total) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (done < total && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  Draw(done, total);
}

void ProgressBar::Draw(uint64_t done, uint64_t total) {
  double fraction = total ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 1.0;
  int filled = static_cast<int>(fraction * kBarWidth);
  out_ << '\r' << label_ << " [" << std::string(filled, '#') << std::string(kBarWidth - filled, '.') << "] "
       << static_cast<int>(fraction * 100) << "% " << FormatBytes(done) << " / " << FormatBytes(total)
       << "   " << std::flush;
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (drawn_) out_ << '\n' << std::flush;
  drawn_ = false;
}

}  // namespace ring::cli
