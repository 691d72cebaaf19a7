#include "cli/table.h"

#include <algorithm>

namespace ring::cli {
namespace {

// Cuts `text` to at most `width` code points, ending with "..." when cut.
std::string Fit(const std::string& text, size_t width) {
  if (width == 0 || DisplayWidth(text) <= width) return text;
  size_t keep = width > 3 ? width - 3 : width;
  std::string out;
  size_t count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80) {
      if (count == keep) break;
      ++count;
    }
    out.push_back(text[i]);
  }
  if (width > 3) out += "...";
  return out;
}

}  // namespace

size_t DisplayWidth(const std::string& text) {
  return static_cast<size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)), max_widths_(headers_.size(), 0) {}

void Table::SetMaxWidth(size_t column, size_t width) {
  if (column < max_widths_.size()) max_widths_[column] = width;
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    // One line per row: newlines and tabs would break the columns.
    std::replace(cells[i].begin(), cells[i].end(), '\n', ' ');
    std::replace(cells[i].begin(), cells[i].end(), '\t', ' ');
    cells[i] = Fit(cells[i], max_widths_[i]);
  }
  rows_.push_back(std::move(cells));
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> widths(headers_.size());
  for (size_t i = 0; i < headers_.size(); ++i) widths[i] = DisplayWidth(headers_[i]);
  for (const auto& row : rows_)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - DisplayWidth(row[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  std::vector<std::string> upper = headers_;
  for (auto& h : upper)
    for (auto& c : h) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  print_row(upper);
  for (const auto& row : rows_) print_row(row);
}

}  // namespace ring::cli
