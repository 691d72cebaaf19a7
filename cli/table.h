#pragma once
// Table: a plain-text table for human output (left-aligned columns separated
// by two spaces, an upper-case header row). Cells wider than a column's
// maximum are cut with "...". Used on the CLI's thread only.
#include <ostream>
#include <string>
#include <vector>

namespace ring::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers);

  // Limits a column's width (in characters); 0 = unlimited.
  void SetMaxWidth(size_t column, size_t width);
  // Missing cells print empty; extra cells are an error of the caller and dropped.
  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }

  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<size_t> max_widths_;
  std::vector<std::vector<std::string>> rows_;
};

// Display width of UTF-8 text (one per code point; no wide characters here).
size_t DisplayWidth(const std::string& text);

}  // namespace ring::cli
