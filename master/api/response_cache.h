#pragma once
// Answers of read routes kept while the data they were built from is
// unchanged: the web UI polls the experiments list and the charts' metrics,
// and building either reads many rows. An answer is valid for the generation
// (Store::ExperimentsGeneration, MetricsGeneration) read before it was built.
// Each kept answer carries its ETag and, when over kMinGzipBody, its gzip
// form, both computed once when it is kept (ApplyContentEncoding sends it).
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "master/http/api_types.h"

namespace ring {

class ResponseCache {
 public:
  // `generation` must never decrease; a key is the route's parameters.
  // Answers from the cache, else builds, one build at a time, so requests
  // that missed together wait for one answer instead of each building it.
  // Only 200 answers are kept.
  ApiResponse Answer(const std::function<uint64_t()>& generation, const std::string& key,
                     const std::function<ApiResponse()>& build);

 private:
  struct Entry {
    std::string body;
    std::string etag;
    std::shared_ptr<const std::string> gzip_body;  // null when the body is small
  };

  std::optional<ApiResponse> Find(uint64_t generation, const std::string& key);
  void Keep(uint64_t generation, const std::string& key, std::shared_ptr<const Entry> entry);

  static constexpr size_t kMaxEntries = 256;
  std::mutex build_mu_;  // held while an answer is built
  std::mutex mu_;
  uint64_t generation_ = 0;
  std::unordered_map<std::string, std::shared_ptr<const Entry>> entries_;
};

// "name=value&" for every query parameter, sorted by name.
std::string QueryKey(const ApiRequest& req);

}  // namespace ring
