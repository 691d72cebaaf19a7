#pragma once
// Typed commands the REST layer decodes request bodies into (master/api/
// commands.cc validates them, naming the field); the lifecycle never sees
// a JSON body.
#include <cstdint>
#include <optional>
#include <string>

namespace ring {

// PATCH /experiments/{id}/resources: the fields given; others keep theirs.
struct ResourcesPatch {
  std::optional<int64_t> priority;  // 1..99, lower runs first
  std::optional<double> weight;     // > 0
  bool set_max_slots = false;       // max_slots was given (null clears it)
  std::optional<int64_t> max_slots;
};

// POST /allocations/{id}/searcher/completed_operation.
struct OperationCompletion {
  int64_t length = 0;  // the operation's batches
  double metric = 0;   // the searcher metric there (finite)
};

// GET /allocations/{id}/searcher/operation: the trial's next operation.
struct OperationAnswer {
  std::optional<int64_t> length;  // train to this many batches, then report
  bool done = false;              // no operation now or later: exit
};

}  // namespace ring
