#pragma once
// A range hyperparameter (int, double or log) for the searcher tests.
#include <cstdint>
#include <optional>

#include "common/searcher/searcher.h"

namespace ring::search {

inline Hyperparameter Range(Hyperparameter::Type type, double min, double max,
                            std::optional<int64_t> count = std::nullopt) {
  Hyperparameter h;
  h.type = type;
  h.minval = min;
  h.maxval = max;
  h.count = count;
  return h;
}

}  // namespace ring::search
