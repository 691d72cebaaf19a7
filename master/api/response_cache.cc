#include "master/api/response_cache.h"

#include <utility>

#include "master/http/conditional_get.h"
#include "master/http/content_encoding.h"

namespace ring {

ApiResponse ResponseCache::Answer(const std::function<uint64_t()>& generation, const std::string& key,
                                  const std::function<ApiResponse()>& build) {
  if (auto r = Find(generation(), key)) return std::move(*r);
  std::lock_guard building(build_mu_);
  const uint64_t built_at = generation();
  if (auto r = Find(built_at, key)) return std::move(*r);
  ApiResponse r = build();
  if (r.status != 200) return r;
  auto entry = std::make_shared<Entry>();
  entry->body = r.body;
  entry->etag = r.etag = BodyEtag(r.body);
  if (r.body.size() >= kMinGzipBody)
    entry->gzip_body = r.gzip_body = std::make_shared<std::string>(Gzip(r.body));
  Keep(built_at, key, std::move(entry));
  return r;
}

std::optional<ApiResponse> ResponseCache::Find(uint64_t generation, const std::string& key) {
  std::shared_ptr<const Entry> entry;
  {
    std::lock_guard lock(mu_);
    if (generation != generation_) return std::nullopt;
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    entry = it->second;
  }
  ApiResponse r;
  r.body = entry->body;  // copied outside the lock
  r.etag = entry->etag;
  r.gzip_body = entry->gzip_body;
  return r;
}

void ResponseCache::Keep(uint64_t generation, const std::string& key, std::shared_ptr<const Entry> entry) {
  std::lock_guard lock(mu_);
  if (generation < generation_) return;  // built from data that has changed since
  if (generation != generation_ || entries_.size() >= kMaxEntries) {
    entries_.clear();
    generation_ = generation;
  }
  entries_[key] = std::move(entry);
}

std::string QueryKey(const ApiRequest& req) {
  std::string key;
  for (const auto& [name, value] : req.query) key += name + "=" + value + "&";  // a std::map: sorted
  return key;
}

}  // namespace ring
