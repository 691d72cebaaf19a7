#include "agent/line_splitter.h"

namespace ring {

std::vector<std::string> LineSplitter::Feed(std::string_view data) {
  std::vector<std::string> lines;
  while (!data.empty()) {
    auto nl = data.find('\n');
    std::string_view piece = data.substr(0, nl);
    // Take only what fits in the current line (partial_ never exceeds max_line_).
    size_t room = max_line_ - partial_.size();
    if (piece.size() > room) {
      partial_.append(piece.substr(0, room));
      lines.push_back(std::move(partial_));
      partial_.clear();
      data.remove_prefix(room);
      continue;
    }
    partial_.append(piece);
    if (nl == std::string_view::npos) break;
    lines.push_back(std::move(partial_));
    partial_.clear();
    data.remove_prefix(nl + 1);
  }
  return lines;
}

std::vector<std::string> LineSplitter::Finish() {
  std::vector<std::string> lines;
  if (!partial_.empty()) lines.push_back(std::move(partial_));
  partial_.clear();
  return lines;
}

}  // namespace ring
