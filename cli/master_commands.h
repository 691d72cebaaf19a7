#pragma once
// `ring master info`: the master's version, uptime, database and counts.
// `ring master backup FILE`: an online copy of the master's database.
// `ring master cleanup`: a retention pass now, and what it removed.
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

int MasterInfo(CliEnv& env);
// Downloads the copy, writes FILE atomically (never over an existing file)
// and checks that it opens as SQLite and passes integrity_check.
int MasterBackup(CliEnv& env, const std::string& path);
int MasterCleanup(CliEnv& env);

}  // namespace ring::cli
