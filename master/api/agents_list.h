#pragma once
// GET /api/v1/agents at 10,000 agents: the list is 6.9 MB of JSON (every
// agent with its slots), too large to build on a network thread, and many
// readers polling it should not each build it. AgentsList keeps the last
// list built (the JSON, its text, ETag and gzip form) and answers every
// request from a list built after that request arrived, so an answer never
// misses a change made before it was asked for (a disable, a new agent):
// requests that arrive while a list is being built share the next build.
//
// Threads: Arrive on any thread (the request's io thread); Answer on the
// pool the route hands it to (ApiContext::list_work), one build at a time.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "master/http/api_types.h"

namespace ring {

class AgentsList {
 public:
  // Builds the list as GET /api/v1/agents shows it (a JSON array).
  explicit AgentsList(std::function<nlohmann::json()> build) : build_(std::move(build)) {}

  // A ticket for a request that has just arrived: pass it to Answer.
  uint64_t Arrive() { return requested_.fetch_add(1) + 1; }

  struct Page {
    int64_t offset = 0;
    std::optional<int64_t> limit;  // none: every agent from offset on
  };
  // {"agents": [...], "total": N}: the agents from `page.offset`, at most
  // `page.limit` of them, from a list built after ticket `ticket` was taken.
  // The whole list carries its ETag and, for `gzip`, its compressed form,
  // both computed here once per build.
  ApiResponse Answer(uint64_t ticket, const Page& page, bool gzip);

  // How many lists were built (tests: requests share builds).
  uint64_t builds() const { return builds_.load(); }

 private:
  struct Built {
    uint64_t covers = 0;  // every ticket up to this one arrived before the build started
    nlohmann::json agents;
    std::string body;  // {"agents": agents, "total": N}
    std::string etag;
    std::shared_ptr<const std::string> gzip_body;  // made when first asked for
  };

  std::shared_ptr<Built> Fresh(uint64_t ticket);

  const std::function<nlohmann::json()> build_;
  std::atomic<uint64_t> requested_{0};
  std::atomic<uint64_t> builds_{0};
  std::mutex mu_;  // held while a list is built or its gzip form made; guards latest_
  std::shared_ptr<Built> latest_;
};

}  // namespace ring
