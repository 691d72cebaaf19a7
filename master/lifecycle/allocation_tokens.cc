#include "master/lifecycle/allocation_tokens.h"

#include "master/auth/tokens.h"
#include "master/store/store.h"

namespace ring {

void AllocationTokens::Add(const std::string& allocation_id, const std::string& token_hash, Holder holder) {
  std::lock_guard lock(mu_);
  live_[allocation_id] = {token_hash, holder};
}

void AllocationTokens::Remove(const std::string& allocation_id) {
  std::lock_guard lock(mu_);
  live_.erase(allocation_id);
}

Result<AllocationTokens::Holder> AllocationTokens::Authorize(const std::string& allocation_id,
                                                             const std::string& token) const {
  {
    std::lock_guard lock(mu_);
    if (auto it = live_.find(allocation_id); it != live_.end()) {
      if (token.empty() || it->second.token_hash.empty() || !TokenMatches(token, it->second.token_hash))
        return Status(ErrorCode::kUnauthenticated, "the allocation token is missing or wrong");
      return it->second.holder;
    }
  }
  auto rec = store_.GetAllocation(allocation_id);
  if (!rec.ok()) return NotFound("allocation " + allocation_id + " does not exist");
  if (token.empty() || rec->token_hash.empty() || !TokenMatches(token, rec->token_hash))
    return Status(ErrorCode::kUnauthenticated, "the allocation token is missing or wrong");
  if (rec->state != AllocationState::kTerminated)
    return Conflict("allocation " + allocation_id + " has not started");
  return Conflict("allocation " + allocation_id + " has ended (" + rec->exit_reason + ")");
}

}  // namespace ring
