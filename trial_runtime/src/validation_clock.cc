#include "validation_clock.h"

namespace ring::trial::detail {

void ValidationClock::Reported(int64_t batches, const std::map<std::string, double>& metrics) {
  if (restored_ || !last_ || *last_ != batches) names_.clear();
  last_ = batches;
  restored_ = false;
  for (const auto& [name, value] : metrics) names_.insert(name);
}

bool ValidationClock::Due(int64_t batches) const {
  return period_ > 0 && batches - last_.value_or(0) >= period_;
}

bool ValidationClock::HasMetricAt(int64_t batches, const std::string& name) const {
  return ReportedAt(batches) && names_.count(name) > 0;
}

void ValidationClock::AddTo(nlohmann::json& metadata) const {
  if (period_ > 0 && last_) metadata[kLastValidationKey] = *last_;
}

void ValidationClock::RestoreFrom(const nlohmann::json& metadata) {
  if (period_ <= 0 || !metadata.is_object()) return;
  const auto it = metadata.find(kLastValidationKey);
  if (it == metadata.end() || !it->is_number_integer()) return;
  last_ = it->get<int64_t>();
  names_.clear();
  restored_ = true;
}

}  // namespace ring::trial::detail
