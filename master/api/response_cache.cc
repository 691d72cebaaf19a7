#include "master/api/response_cache.h"

#include <utility>

namespace ring {
namespace {

ApiResponse Body(std::string body) {
  ApiResponse r;
  r.body = std::move(body);
  return r;
}

}  // namespace

ApiResponse ResponseCache::Answer(const std::function<uint64_t()>& generation, const std::string& key,
                                  const std::function<ApiResponse()>& build) {
  if (auto body = Find(generation(), key)) return Body(std::move(*body));
  std::lock_guard building(build_mu_);
  const uint64_t built_at = generation();
  if (auto body = Find(built_at, key)) return Body(std::move(*body));
  ApiResponse r = build();
  if (r.status == 200) Keep(built_at, key, r.body);
  return r;
}

std::optional<std::string> ResponseCache::Find(uint64_t generation, const std::string& key) {
  std::lock_guard lock(mu_);
  if (generation != generation_) return std::nullopt;
  auto it = bodies_.find(key);
  if (it == bodies_.end()) return std::nullopt;
  return it->second;
}

void ResponseCache::Keep(uint64_t generation, const std::string& key, const std::string& body) {
  std::lock_guard lock(mu_);
  if (generation < generation_) return;  // built from data that has changed since
  if (generation != generation_ || bodies_.size() >= kMaxEntries) {
    bodies_.clear();
    generation_ = generation;
  }
  bodies_[key] = body;
}

std::string QueryKey(const ApiRequest& req) {
  std::string key;
  for (const auto& [name, value] : req.query) key += name + "=" + value + "&";  // a std::map: sorted
  return key;
}

}  // namespace ring
