#pragma once
// ValidationClock: the validation reports a trial made, for
// Context::validation_due() (min_validation_period) and for the Searcher
// (was the searcher metric reported at an operation's length?). With a
// period set, every checkpoint records the batches of the last validation
// in its metadata and a resumed trial takes it back, so validation_due()
// answers the same whether the trial was interrupted or not. Owned by the
// Context (shared with its Checkpoints); training thread only.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace ring::trial::detail {

// The checkpoint metadata key of the last validation's batches.
inline constexpr const char* kLastValidationKey = "ring_last_validation_batches";

class ValidationClock {
 public:
  explicit ValidationClock(int64_t period_batches) : period_(period_batches) {}

  int64_t period() const { return period_; }
  // A validation report at `batches` with these metrics (non-finite ones left out).
  void Reported(int64_t batches, const std::map<std::string, double>& metrics);
  // A period is set and at least that many batches passed since the last
  // validation report (or the start).
  bool Due(int64_t batches) const;
  // The last validation report was at `batches` and included `name`.
  bool HasMetricAt(int64_t batches, const std::string& name) const;
  // The last validation report was at `batches` (with any metrics).
  bool ReportedAt(int64_t batches) const { return !restored_ && last_ && *last_ == batches; }

  // Checkpoint metadata: records the last validation (only when a period is set).
  void AddTo(nlohmann::json& metadata) const;
  // Takes the last validation back from the metadata of the checkpoint resumed from.
  void RestoreFrom(const nlohmann::json& metadata);

 private:
  int64_t period_;
  std::optional<int64_t> last_;  // batches of the last validation report
  std::set<std::string> names_;  // metrics reported at *last_
  bool restored_ = false;        // *last_ came from a checkpoint: its metrics are not known
};

}  // namespace ring::trial::detail
