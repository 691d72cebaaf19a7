#pragma once
// `ring user login|logout|whoami|create|list|change-password|activate|deactivate`.
// Passwords come from --password-file, else a prompt without echo on a
// terminal, else one line of standard input (for scripts).
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

struct UserOptions {
  std::string username;
  std::string password_file;
  bool admin = false;  // create: role admin
};

int Login(CliEnv& env, const UserOptions& o);
int Logout(CliEnv& env);
int WhoAmI(CliEnv& env);
int CreateUser(CliEnv& env, const UserOptions& o);
int ListUsers(CliEnv& env);
int ChangePassword(CliEnv& env, const UserOptions& o);
int SetUserActive(CliEnv& env, const std::string& username, bool active);

}  // namespace ring::cli
