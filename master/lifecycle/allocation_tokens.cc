#include "master/lifecycle/allocation_tokens.h"

#include <cctype>
#include <string>

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

bool AllocationTokens::Live(const std::string& allocation_id) const {
  std::lock_guard lock(mu_);
  return live_.contains(allocation_id);
}

Result<AllocationTokens::Holder> AllocationTokens::AuthorizeTrial(const std::string& allocation_id,
                                                                  const std::string& token) const {
  auto holder = Authorize(allocation_id, token);
  if (holder.ok() && holder->kind != TaskKind::kTrial)
    return Status(ErrorCode::kPermissionDenied, "allocation " + allocation_id + " is a " +
                                                    std::string(ToString(holder->kind)) +
                                                    "'s, and only a trial makes this call");
  return holder;
}

namespace {

constexpr size_t kTokenHexDigits = 64;

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

std::string AllocationTokens::Redact(std::string text) const {
  if (text.size() < kTokenHexDigits) return text;
  size_t i = 0;
  while (i < text.size()) {
    if (!IsHex(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && IsHex(text[end])) ++end;
    if (end - i != kTokenHexDigits) {
      i = end;
      continue;
    }
    std::string candidate = text.substr(i, kTokenHexDigits);
    for (auto& c : candidate) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string hash = HashToken(candidate);
    bool live = false;
    {
      std::lock_guard lock(mu_);
      for (const auto& [id, entry] : live_) live = live || entry.token_hash == hash;
    }
    if (!live) {
      i = end;
      continue;
    }
    text.replace(i, kTokenHexDigits, kHiddenToken);
    i += std::char_traits<char>::length(kHiddenToken);
  }
  return text;
}

}  // namespace ring
