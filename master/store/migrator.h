#pragma once
// Brings a SQLite database's schema up to date with the migrations this binary
// knows. Forward-only: each missing migration runs in its own transaction
// together with its row in schema_migrations(version, name, applied_at), so a
// failing migration leaves the database at the previous version. Runs on the
// thread that opens the store, before anything else uses the connection.
#include <vector>

#include "common/status.h"
#include "master/store/migration.h"
#include "master/store/sqlite_db.h"

namespace ring {

// The highest recorded migration version; 0 for a new (empty) database.
Result<int> SchemaVersion(SqliteDb& db);

// Applies every migration newer than the recorded version, in version order,
// and returns the resulting version. `migrations` must have strictly increasing
// positive versions (kInternal otherwise). A database whose recorded version is
// newer than the last known migration is refused with kConflict and left as is.
Result<int> ApplyMigrations(SqliteDb& db, const std::vector<Migration>& migrations);

}  // namespace ring
