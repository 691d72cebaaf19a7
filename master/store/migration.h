#pragma once
// One schema migration, and the list compiled into this binary.
#include <string>
#include <vector>

namespace ring {

struct Migration {
  int version = 0;   // from the file name's number, e.g. 1 for 0001_initial.sql
  std::string name;  // the rest of the file name, e.g. "initial"
  std::string sql;   // the file's text, run as one script
};

// The migrations/*.sql files listed in master/store/CMakeLists.txt, embedded at
// build time (builtin_migrations.cc is generated), in increasing version order.
std::vector<Migration> BuiltinMigrations();

}  // namespace ring
