#include "digits_data.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

#include "ring/trial/data_sampler.h"

namespace digits {
namespace {

constexpr size_t kFields = kPixels + 1;
constexpr size_t kMaxLineBytes = 4096;  // a real row is under 200 bytes

struct GzCloser {
  void operator()(gzFile f) const {
    if (f) gzclose(f);
  }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// One row's fields as integers; false (with `why`) when malformed.
bool ParseRow(std::string_view line, int* fields, std::string& why) {
  size_t n = 0;
  size_t pos = 0;
  while (true) {
    const size_t comma = line.find(',', pos);
    const std::string_view field =
        line.substr(pos, comma == std::string_view::npos ? line.npos : comma - pos);
    if (n == kFields) {
      why = "has more than " + std::to_string(kFields) + " fields (64 pixels and the label)";
      return false;
    }
    if (field.empty() || field.size() > 3) {
      why = "field " + std::to_string(n + 1) + " is \"" + std::string(field.substr(0, 20)) +
            "\", not a small non-negative integer";
      return false;
    }
    int value = 0;
    for (char c : field) {
      if (c < '0' || c > '9') {
        why = "field " + std::to_string(n + 1) + " is \"" + std::string(field) +
              "\", not a non-negative integer";
        return false;
      }
      value = value * 10 + (c - '0');
    }
    fields[n++] = value;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (n != kFields) {
    why = "has " + std::to_string(n) + " fields, expected " + std::to_string(kFields) +
          " (64 pixels and the label)";
    return false;
  }
  for (size_t i = 0; i < kPixels; ++i)
    if (fields[i] > kMaxIntensity) {
      why = "pixel " + std::to_string(i + 1) + " is " + std::to_string(fields[i]) + ", outside 0.." +
            std::to_string(kMaxIntensity);
      return false;
    }
  if (fields[kPixels] >= static_cast<int>(kClasses)) {
    why = "label " + std::to_string(fields[kPixels]) + " is outside 0..9";
    return false;
  }
  return true;
}

}  // namespace

std::filesystem::path ResolvePath(const std::optional<std::string>& configured,
                                  const char* from_environment) {
  if (configured && !configured->empty()) return *configured;
  if (from_environment && *from_environment) return from_environment;
  return kDefaultPath;
}

Dataset Load(const std::filesystem::path& path, size_t expected_rows) {
  const std::string where = path.string();
  errno = 0;
  GzFile file(gzopen(where.c_str(), "rb"));
  if (!file)
    throw DataError("cannot open the digits data " + where + ": " +
                    (errno ? std::strerror(errno) : "out of memory") +
                    " (install python3-sklearn, or point RING_DIGITS_PATH or the data_path hyperparameter "
                    "at digits.csv.gz)");
  Dataset data;
  data.pixels.reserve(expected_rows * kPixels);
  data.labels.reserve(expected_rows);
  int fields[kFields];
  std::string line;
  size_t line_number = 0;
  auto take_line = [&] {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) throw DataError(where + ":" + std::to_string(line_number) + ": empty line");
    std::string why;
    if (!ParseRow(line, fields, why))
      throw DataError(where + ":" + std::to_string(line_number) + ": row " + why);
    if (data.size() == expected_rows)
      throw DataError(where + ":" + std::to_string(line_number) + ": more than the expected " +
                      std::to_string(expected_rows) + " rows");
    data.pixels.insert(data.pixels.end(), fields, fields + kPixels);
    data.labels.push_back(static_cast<uint8_t>(fields[kPixels]));
    line.clear();
  };
  // A truncated stream ends like a whole one (gzread returns 0) with the
  // error only in gzerror(), so that is asked at the end too.
  auto throw_if_corrupted = [&](bool failed) {
    int code = Z_OK;
    const char* message = gzerror(file.get(), &code);
    if (!failed && (code == Z_OK || code == Z_STREAM_END)) return;
    throw DataError(where + ": corrupted or not gzip-compressed after line " + std::to_string(line_number) +
                    ": " + (message && *message ? message : "read error"));
  };
  char buffer[1 << 16];
  while (true) {
    const int got = gzread(file.get(), buffer, sizeof buffer);
    if (got <= 0) {
      throw_if_corrupted(got < 0);
      break;
    }
    for (int i = 0; i < got; ++i) {
      if (buffer[i] == '\n') {
        take_line();
      } else {
        line.push_back(buffer[i]);
        if (line.size() > kMaxLineBytes)
          throw DataError(where + ":" + std::to_string(line_number + 1) + ": line longer than " +
                          std::to_string(kMaxLineBytes) + " bytes; is this the digits CSV?");
      }
    }
  }
  if (!line.empty()) take_line();  // no newline after the last row
  if (data.size() != expected_rows)
    throw DataError(where + ": " + std::to_string(data.size()) + " rows, expected " +
                    std::to_string(expected_rows) + " (64 pixels and the label each)");
  return data;
}

Split SplitRecords(const Dataset& all, size_t validation_size, uint64_t seed) {
  if (validation_size == 0 || validation_size >= all.size())
    throw DataError("validation_size must be between 1 and " + std::to_string(all.size() - 1) + ", got " +
                    std::to_string(validation_size));
  const std::vector<uint64_t> order = ring::trial::EpochPermutation(all.size(), seed, 0);
  Split split;
  for (size_t i = 0; i < order.size(); ++i) {
    Dataset& to = i < validation_size ? split.validation : split.train;
    const size_t r = static_cast<size_t>(order[i]);
    to.pixels.insert(to.pixels.end(), all.pixels.begin() + static_cast<std::ptrdiff_t>(r * kPixels),
                     all.pixels.begin() + static_cast<std::ptrdiff_t>((r + 1) * kPixels));
    to.labels.push_back(all.labels[r]);
  }
  return split;
}

std::vector<size_t> LabelCounts(const Dataset& data) {
  std::vector<size_t> counts(kClasses, 0);
  for (uint8_t label : data.labels) ++counts[label];
  return counts;
}

}  // namespace digits
