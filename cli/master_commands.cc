#include "cli/master_commands.h"

#include <cstdio>

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

}  // namespace

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
  env.out << "master:      " << env.master.url().ToString() << "\n"
          << "version:     " << Field(*info, "version") << "\n"
          << "started:     " << Field(*info, "started_at") << " (up " << Duration(uptime) << ")\n"
          << "database:    " << Field(db, "path") << ", " << bytes("bytes") << " + " << bytes("wal_bytes")
          << " WAL, schema version " << Field(db, "schema_version") << "\n"
          << "experiments: " << Field(counts, "experiments") << ", agents: " << Field(counts, "agents")
          << ", users: " << Field(counts, "users") << "\n";
  return kExitOk;
}

}  // namespace ring::cli
