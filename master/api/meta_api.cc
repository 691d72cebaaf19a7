// The master about itself: GET /api/v1/openapi.json (public) and
// GET /api/v1/master/info (any signed-in user; `ring master info`).
#include <filesystem>

#include "master/api/routes.h"
#include "master/core/experiment_controller.h"
#include "master/store/store.h"

namespace ring {
namespace {

// Size of a file, or -1 when it is missing.
int64_t FileBytes(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? -1 : static_cast<int64_t>(size);
}

ApiResponse Info(ApiContext& ctx) {
  const auto now = std::chrono::system_clock::now();
  nlohmann::json counts = nlohmann::json::object();
  if (auto page = ctx.store.ListExperiments(0, 0); page.ok()) counts["experiments"] = page->total;
  if (auto agents = ctx.store.ListAgents(); agents.ok()) counts["agents"] = agents->size();
  if (auto users = ctx.store.ListUsers(); users.ok()) counts["users"] = users->size();
  nlohmann::json database = {{"path", ctx.db_path}, {"schema_version", ctx.schema_version}};
  if (!ctx.db_path.empty()) {
    database["bytes"] = FileBytes(ctx.db_path);
    database["wal_bytes"] = std::max<int64_t>(0, FileBytes(ctx.db_path + "-wal"));
  }
  return ApiResponse::Json({{"version", ctx.version},
                            {"started_at", FormatRfc3339(ctx.started_at)},
                            {"uptime_s", std::chrono::duration<double>(now - ctx.started_at).count()},
                            {"database", database},
                            {"counts", counts}});
}

}  // namespace

void RegisterMetaRoutes(Router& router, ApiContext& ctx) {
  router.AddSync("GET", "/api/v1/openapi.json", Access::kPublic, [](ApiRequest&) {
    ApiResponse r;
    r.body = std::string(OpenApiDocument());
    return r;
  });
  router.AddSync("GET", "/api/v1/master/info", Access::kUser, [&ctx](ApiRequest&) { return Info(ctx); });
}

}  // namespace ring
