#include "master/api/agents_list.h"

#include <algorithm>
#include <string>
#include <utility>

#include "master/http/conditional_get.h"
#include "master/http/content_encoding.h"

namespace ring {

std::shared_ptr<AgentsList::Built> AgentsList::Fresh(uint64_t ticket) {
  if (latest_ && latest_->covers >= ticket) return latest_;
  auto built = std::make_shared<Built>();
  built->covers = requested_.load();  // read before building: those requests arrived before it
  built->agents = build_();
  const auto total = built->agents.size();
  // As ApiResponse::Json would write {"agents": ..., "total": N}, without copying the list.
  built->body =
      "{\"agents\":" + built->agents.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
      ",\"total\":" + std::to_string(total) + "}";
  built->etag = BodyEtag(built->body);
  builds_.fetch_add(1);
  latest_ = built;
  return built;
}

ApiResponse AgentsList::Answer(uint64_t ticket, const Page& page, bool gzip) {
  std::shared_ptr<Built> built;
  std::shared_ptr<const std::string> gzip_body;
  {
    std::lock_guard lock(mu_);
    built = Fresh(ticket);
    const bool whole = page.offset == 0 && !page.limit;
    if (whole && gzip && built->body.size() >= kMinGzipBody) {
      if (!built->gzip_body) built->gzip_body = std::make_shared<std::string>(Gzip(built->body));
      gzip_body = built->gzip_body;
    }
  }
  const auto& all = built->agents;
  const auto total = static_cast<int64_t>(all.size());
  if (page.offset == 0 && !page.limit) {
    ApiResponse r;
    r.body = built->body;  // copied outside the lock
    r.etag = built->etag;
    r.gzip_body = std::move(gzip_body);
    return r;
  }
  const int64_t from = std::min(page.offset, total);
  const int64_t to = page.limit ? std::min(total, from + *page.limit) : total;
  nlohmann::json agents = nlohmann::json::array();
  for (int64_t i = from; i < to; ++i) agents.push_back(all[static_cast<size_t>(i)]);
  return ApiResponse::Json({{"agents", std::move(agents)}, {"total", total}});
}

}  // namespace ring
