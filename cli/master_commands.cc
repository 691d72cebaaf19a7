#include "cli/master_commands.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli/format.h"

namespace ring::cli {
namespace {

std::string Duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds);
  char buf[64];
  if (s >= 86400)
    std::snprintf(buf, sizeof buf, "%lldd %02lldh %02lldm", static_cast<long long>(s / 86400),
                  static_cast<long long>(s % 86400 / 3600), static_cast<long long>(s % 3600 / 60));
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s % 3600 / 60), static_cast<long long>(s % 60));
  return buf;
}

// "ok", or what integrity_check (or opening) says is wrong.
std::string CheckDatabase(const std::string& path, int64_t* experiments) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : "cannot open";
    sqlite3_close_v2(db);
    return why;
  }
  std::string verdict = "no answer";
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW)
    verdict = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  else
    verdict = sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM experiments", -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW)
    *experiments = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
  return verdict;
}

Status WriteNew(const std::string& path, const std::string& bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec)) return Conflict(path + " exists; name a new file");
  const std::string tmp = path + ".partial";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return InvalidArgument("cannot write " + tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const bool ok = done == bytes.size() && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    fs::remove(tmp, ec);
    return Internal("cannot write " + tmp);
  }
  fs::rename(tmp, path, ec);
  if (ec) return Internal("cannot rename " + tmp + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

int MasterBackup(CliEnv& env, const std::string& path) {
  auto bytes = env.master.GetBytes("/api/v1/master/backup");
  if (!bytes.ok()) return env.Fail(bytes.status());
  if (Status s = WriteNew(path, *bytes); !s.ok()) return env.Fail(s);
  int64_t experiments = -1;
  const std::string verdict = CheckDatabase(path, &experiments);
  if (verdict != "ok") return env.Fail(Internal("the backup in " + path + " is not sound: " + verdict));
  if (env.json) {
    env.out << nlohmann::json{{"path", path}, {"bytes", bytes->size()}, {"experiments", experiments}}.dump()
            << '\n';
    return kExitOk;
  }
  env.out << "Backed up the master's database to " << path << " (" << FormatBytes(bytes->size())
          << ", integrity ok, " << experiments << " experiments)\n";
  return kExitOk;
}

int MasterInfo(CliEnv& env) {
  auto info = env.master.Get("/api/v1/master/info");
  if (!info.ok()) return env.Fail(info.status());
  if (env.json) {
    env.out << info->dump(2) << '\n';
    return kExitOk;
  }
  const auto& db = Member(*info, "database");
  const auto& counts = Member(*info, "counts");
  const auto bytes = [&](const char* key) {
    const auto& v = Member(db, key);
    return v.is_number_integer() && v.get<int64_t>() >= 0 ? FormatBytes(v.get<uint64_t>()) : std::string("?");
  };
  const double uptime = Member(*info, "uptime_s").is_number() ? Member(*info, "uptime_s").get<double>() : 0;
  std::string retention = "not reported";
  if (const auto& r = Member(*info, "retention"); r.is_object()) {
    const auto days = [&](const char* key, const char* never) {
      const auto& v = Member(r, key);
      return v.is_number_integer() && v.get<int64_t>() >= 0 ? std::to_string(v.get<int64_t>()) + " days"
                                                            : std::string(never);
    };
    retention =
        "logs " + days("log_retention_days", "kept") + ", metrics thinned after " +
        days("metrics_full_resolution_days", "never") + ", last pass " +
        (Member(r, "last_pass").is_object() ? Field(Member(r, "last_pass"), "started_at") : "none yet");
  }
  env.out << "master:      " << env.master.url().ToString() << "\n"
          << "version:     " << Field(*info, "version") << "\n"
          << "started:     " << Field(*info, "started_at") << " (up " << Duration(uptime) << ")\n"
          << "database:    " << Field(db, "path") << ", " << bytes("bytes") << " + " << bytes("wal_bytes")
          << " WAL, schema version " << Field(db, "schema_version") << "\n"
          << "experiments: " << Field(counts, "experiments") << ", agents: " << Field(counts, "agents")
          << ", users: " << Field(counts, "users") << "\n"
          << "retention:   " << retention << "\n";
  return kExitOk;
}

int MasterCleanup(CliEnv& env) {
  auto report = env.master.Post("/api/v1/master/retention", nlohmann::json::object());
  if (!report.ok()) return env.Fail(report.status());
  if (env.json) {
    env.out << report->dump(2) << '\n';
    return kExitOk;
  }
  const auto& db = Member(*report, "database_bytes");
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f",
                Member(*report, "seconds").is_number() ? Member(*report, "seconds").get<double>() : 0.0);
  env.out << "Retention pass in " << seconds << " s over " << Field(*report, "trials")
          << " trials: " << Field(*report, "metric_reports_deleted") << " training reports thinned from "
          << Field(*report, "trials_thinned") << " trials, " << Field(*report, "log_lines_deleted")
          << " log lines deleted from " << Field(*report, "trials_logs_deleted") << " trials; database now "
          << (db.is_number_integer() && db.get<int64_t>() >= 0 ? FormatBytes(db.get<uint64_t>()) : "?")
          << "\n";
  return kExitOk;
}

}  // namespace ring::cli
