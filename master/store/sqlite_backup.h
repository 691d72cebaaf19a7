#pragma once
// Online backup of the master's database with SQLite's backup API: a
// consistent copy taken through a read-only connection of its own, so the
// master keeps reading and writing while it runs (WAL readers never block
// writers), copied in steps of a few hundred pages.
#include <cstdint>
#include <string>

#include "common/status.h"

namespace ring {

// Copies the database at `source` into a new file `dest` (which must not
// exist) and checks the copy with PRAGMA integrity_check. Returns its size.
Result<int64_t> BackupSqliteDatabase(const std::string& source, const std::string& dest);

}  // namespace ring
