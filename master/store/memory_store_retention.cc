// MemoryStore: what retention deletes.
#include "master/store/memory_store.h"
#include "master/store/store_util.h"

namespace ring {

Result<int64_t> MemoryStore::CountMetrics(int64_t trial_id, MetricKind kind) {
  auto reports = GetMetrics(trial_id, kind);
  if (!reports.ok()) return reports.status();
  return static_cast<int64_t>(reports->size());
}

Result<int64_t> MemoryStore::DeleteMetrics(int64_t trial_id, MetricKind kind,
                                           const std::vector<int64_t>& batches) {
  const WriteNotice changes(metrics_generation_);
  std::lock_guard lock(mu_);
  int64_t deleted = 0;
  for (const int64_t b : batches)
    deleted += static_cast<int64_t>(metrics_.erase(MetricKey{trial_id, kind, b}));
  return deleted;
}

Result<int64_t> MemoryStore::DeleteLogs(int64_t trial_id) {
  std::lock_guard lock(mu_);
  auto it = logs_.find(trial_id);
  if (it == logs_.end()) return int64_t{0};
  const auto deleted = static_cast<int64_t>(it->second.size());
  logs_.erase(it);
  return deleted;
}

Status MemoryStore::Compact() {
  return Status::Ok();
}

}  // namespace ring
