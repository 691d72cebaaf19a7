#pragma once
// The Searcher's bookkeeping of its trials, common to every search method:
// request ids handed out in order, each trial's outstanding TrainTo, whether
// it was closed and how it ended. Owned by the Searcher's state; snapshots
// to JSON with it.
#include <cstdint>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/searcher/searcher.h"

namespace ring::search {

// How a trial ended, as far as the searcher knows.
enum class TrialEnd { kNone, kClosed, kErrored, kInvalidHparams, kCanceled };

struct TrialEntry {
  std::optional<int64_t> operation;  // the outstanding TrainTo length
  int64_t target = 0;                // the latest TrainTo length given (0 before any)
  bool created = false;              // TrialCreated arrived
  bool closed = false;               // CloseTrial was decided, or the trial ended
  TrialEnd end = TrialEnd::kNone;
  bool ended() const { return end != TrialEnd::kNone; }
};

class TrialTable {
 public:
  // A new trial with the next request id (1, 2, 3...).
  RequestId Add();
  TrialEntry* Find(RequestId id);
  const TrialEntry* Find(RequestId id) const;
  // Records how a trial ended; clears its operation and closes it.
  void End(RequestId id, TrialEnd end);

  const std::map<RequestId, TrialEntry>& entries() const { return trials_; }
  RequestId next_id() const { return next_id_; }
  // Trials created and not ended.
  int64_t live() const { return live_; }
  // Trials that ended by each way.
  int64_t ended(TrialEnd end) const;

  nlohmann::json ToJson() const;
  // Throws SnapshotError on anything ToJson() would not have written.
  static TrialTable FromJson(const nlohmann::json& j);

 private:
  RequestId next_id_ = 1;
  std::map<RequestId, TrialEntry> trials_;
  int64_t live_ = 0;
  std::map<TrialEnd, int64_t> ended_;
};

}  // namespace ring::search
