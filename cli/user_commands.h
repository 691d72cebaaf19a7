#pragma once
// `ring user login|logout|whoami|create|list|change-password|activate|deactivate|
// link-unix|unlink-unix`. Passwords come from --password-file (and
// --current-password-file), else a prompt without echo on a terminal, else
// one line of standard input each (for scripts: the current password first).
#include <string>

#include "cli/cli_env.h"
#include "cli/unix_account.h"

namespace ring::cli {

struct UserOptions {
  std::string username;
  std::string password_file;
  std::string current_password_file;  // change-password of your own
  bool admin = false;                 // create: role admin
};

int Login(CliEnv& env, const UserOptions& o);
int Logout(CliEnv& env);
int WhoAmI(CliEnv& env);
int CreateUser(CliEnv& env, const UserOptions& o);
int ListUsers(CliEnv& env);
int ChangePassword(CliEnv& env, const UserOptions& o);
int SetUserActive(CliEnv& env, const std::string& username, bool active);
int LinkUnix(CliEnv& env, const UnixLinkOptions& o);
int UnlinkUnix(CliEnv& env, const std::string& username);

}  // namespace ring::cli
