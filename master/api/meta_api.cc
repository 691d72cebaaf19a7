// The master about itself: GET /api/v1/openapi.json (public),
// GET /api/v1/master/info (any signed-in user; `ring master info`) and
// GET /api/v1/master/backup (admins; `ring master backup FILE`),
// POST /api/v1/master/retention (admins; `ring master cleanup`) and the
// Prometheus metrics at GET /metrics (public: counts and timings only).
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/states.h"
#include "master/api/json_views.h"
#include "master/api/routes.h"
#include "master/files/file_stream.h"
#include "master/lifecycle/lifecycle.h"
#include "master/maintenance/retention.h"
#include "master/observability/master_metrics.h"
#include "master/rm/agentrm/agent_rm.h"
#include "master/store/sqlite_backup.h"
#include "master/store/store.h"

namespace ring {
namespace {

namespace net = boost::asio;

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
  nlohmann::json info = {{"version", ctx.version},
                         {"started_at", FormatRfc3339(ctx.started_at)},
                         {"uptime_s", std::chrono::duration<double>(now - ctx.started_at).count()},
                         {"database", database},
                         {"counts", counts}};
  if (ctx.retention != nullptr) {
    const RetentionOptions& o = ctx.retention->options();
    const auto last = ctx.retention->last();
    info["retention"] = {{"interval_minutes", o.interval_minutes},
                         {"log_retention_days", o.log_retention_days},
                         {"metrics_full_resolution_days", o.metrics_full_resolution_days},
                         {"metrics_max_points", o.metrics_max_points},
                         {"last_pass", last ? last->ToJson() : nlohmann::json()}};
  }
  return ApiResponse::Json(info);
}

ApiResponse RunRetention(ApiContext& ctx) {
  if (ctx.retention == nullptr)
    return ApiResponse::Error(Unavailable("this master has no retention settings"));
  auto report = ctx.retention->Run(std::chrono::system_clock::now());
  if (!report.ok()) return ApiResponse::Error(report.status());
  nlohmann::json body = report->ToJson();
  if (!ctx.db_path.empty()) {
    body["database_bytes"] = FileBytes(ctx.db_path);
    body["wal_bytes"] = std::max<int64_t>(0, FileBytes(ctx.db_path + "-wal"));
  }
  return ApiResponse::Json(body);
}

// A consistent copy of the database, made next to it (same file system,
// the master's own folder), unlinked at once and streamed from its open
// descriptor, so it is gone when the answer ends however it ends.
ApiResponse Backup(ApiContext& ctx, std::shared_ptr<void> slot) {
  if (ctx.db_path.empty()) return ApiResponse::Error(Unavailable("this master has no database file"));
  namespace fs = std::filesystem;
  const fs::path dir = fs::absolute(ctx.db_path).parent_path();
  std::string tmpl = (dir / ".backup-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return ApiResponse::Error(Internal("cannot make a temporary file in " + dir.string()));
  ::close(fd);
  std::error_code ec;
  fs::remove(tmpl, ec);  // the backup creates it afresh
  auto size = BackupSqliteDatabase(ctx.db_path, tmpl);
  if (!size.ok()) {
    fs::remove(tmpl, ec);
    return ApiResponse::Error(size.status());
  }
  UniqueFd file(::open(tmpl.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  fs::remove(tmpl, ec);
  if (!file.valid()) return ApiResponse::Error(Internal("the backup could not be read back"));
  ApiResponse r;
  r.content_type = "application/vnd.sqlite3";
  r.stream = MakeFileStream(std::move(file), static_cast<uint64_t>(*size), std::move(slot));
  return r;
}

}  // namespace

void RegisterMetaRoutes(Router& router, ApiContext& ctx) {
  router.Add("GET", "/metrics", Access::kPublic, [&ctx](ApiRequest&) {
    return OnLifecycle(ctx, [&ctx](Lifecycle& l) {
      if (ctx.metrics == nullptr) return ApiResponse::Error(Unavailable("this master keeps no metrics"));
      // Counted, not listed: a scrape at 10,000 agents no longer holds the
      // lifecycle thread for the agents list's 0.3 s.
      MasterMetrics::PoolStateCounts agents, slots;
      for (const auto& [pool, n] : ctx.agents.CountAgents()) {
        for (const auto& [state, k] : n.agents) agents[{pool, std::string(ToString(state))}] = k;
        slots[{pool, "used"}] = n.connected_slots_used;
        slots[{pool, "free"}] = n.connected_slots - n.connected_slots_used;
      }
      ctx.metrics->SetClusterGauges(agents, slots, JobsJson(l.scheduling().Jobs()));
      ApiResponse r;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = ctx.metrics->Render();
      return r;
    });
  });
  // Copying runs off the network threads.
  router.Add(
      "GET", "/api/v1/master/backup", Access::kAdmin, [&ctx](ApiRequest&) -> net::awaitable<ApiResponse> {
        auto slot = TakeStreamSlot(ctx);
        if (!slot.ok()) co_return ApiResponse::Error(slot.status());
        co_return co_await OffNetworkThread(ctx.file_work, [&ctx, &slot] { return Backup(ctx, *slot); });
      });
  router.AddSync("GET", "/api/v1/openapi.json", Access::kPublic, [](ApiRequest&) {
    ApiResponse r;
    r.body = std::string(OpenApiDocument());
    return r;
  });
  router.AddSync("GET", "/api/v1/master/info", Access::kUser, [&ctx](ApiRequest&) { return Info(ctx); });
  // A retention pass now, on the maintenance thread (a timed pass in progress finishes first).
  router.Add("POST", "/api/v1/master/retention", Access::kAdmin, [&ctx](ApiRequest&) {
    return OffNetworkThread(ctx.maintenance, [&ctx] { return RunRetention(ctx); });
  });
}

}  // namespace ring
