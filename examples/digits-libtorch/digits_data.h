#pragma once
// The handwritten digits data set (UCI optdigits test set, as scikit-learn
// ships it): 1,797 images of 8x8 pixels with intensities 0..16, each with its
// digit 0..9. Read from the gzip-compressed CSV of Debian's python3-sklearn
// (one row per image: 64 pixels then the label), checked strictly, and split
// into training and validation records by a seeded shuffle that is the same
// on every platform. No torch here, so the loader builds and is tested
// without libtorch.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ring/trial/errors.h"

namespace digits {

inline constexpr size_t kPixels = 64;     // 8 x 8
inline constexpr size_t kClasses = 10;    // digits 0..9
inline constexpr size_t kRecords = 1797;  // rows of digits.csv.gz
inline constexpr int kMaxIntensity = 16;  // pixels are 0..16
inline constexpr const char* kDefaultPath =
    "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
inline constexpr const char* kPathVariable = "RING_DIGITS_PATH";

// The file is missing, unreadable, corrupted or not shaped like the data set;
// the message names the path (and the line, for a bad row).
class DataError : public ring::trial::TrialError {
 public:
  using TrialError::TrialError;
};

struct Dataset {
  std::vector<uint8_t> pixels;  // size() * kPixels intensities 0..16, row by row
  std::vector<uint8_t> labels;  // 0..9
  size_t size() const { return labels.size(); }
};

// Where the data is: `configured` (the data_path hyperparameter) when set,
// else `from_environment` (RING_DIGITS_PATH) when set and not empty, else
// kDefaultPath.
std::filesystem::path ResolvePath(const std::optional<std::string>& configured, const char* from_environment);

// Reads the gzip-compressed CSV (an uncompressed one reads too). Throws
// DataError naming the path, and the line for a malformed row: not 65
// comma-separated integers, a pixel outside 0..16, a label outside 0..9, or
// a row count other than `expected_rows`.
Dataset Load(const std::filesystem::path& path, size_t expected_rows = kRecords);

struct Split {
  Dataset train;
  Dataset validation;
};

// The records in the order of a shuffle seeded by `seed` (the trial
// runtime's portable EpochPermutation): the first `validation_size` go to
// validation, the rest to training. Throws DataError when validation_size
// leaves either part empty.
Split SplitRecords(const Dataset& all, size_t validation_size, uint64_t seed);

// How many records of each digit (kClasses counts).
std::vector<size_t> LabelCounts(const Dataset& data);

}  // namespace digits
