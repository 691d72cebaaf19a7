#include "svm_features.h"

namespace svm {

Features FromDigits(const digits::Dataset& data) {
  Features f;
  f.features = digits::kPixels;
  f.x.resize(data.pixels.size());
  for (size_t i = 0; i < data.pixels.size(); ++i)
    f.x[i] = static_cast<float>(data.pixels[i]) / static_cast<float>(digits::kMaxIntensity);
  f.labels = data.labels;
  return f;
}

}  // namespace svm
