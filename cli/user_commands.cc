#include "cli/user_commands.h"

#include <termios.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/credentials.h"
#include "cli/format.h"
#include "cli/table.h"

namespace ring::cli {
namespace {

std::string Trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string PromptNoEcho(std::ostream& err, const std::string& prompt) {
  err << prompt << std::flush;
  termios old{};
  const bool tty = ::tcgetattr(STDIN_FILENO, &old) == 0;
  if (tty) {
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
  }
  std::string line;
  std::getline(std::cin, line);
  if (tty) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
  err << '\n';
  return line;
}

// From the file, a prompt (twice when `confirm`) or a line of stdin.
Result<std::string> ReadPassword(CliEnv& env, const std::string& file, const std::string& prompt,
                                 bool confirm) {
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) return InvalidArgument("cannot read the password file " + file);
    std::stringstream text;
    text << in.rdbuf();
    return Trim(text.str());
  }
  if (::isatty(STDIN_FILENO) == 1) {
    std::string password = PromptNoEcho(env.err, prompt + ": ");
    if (confirm && PromptNoEcho(env.err, "again: ") != password)
      return InvalidArgument("the two passwords differ");
    return password;
  }
  std::string line;
  std::getline(std::cin, line);
  return Trim(line);
}

Result<nlohmann::json> FindUser(CliEnv& env, const std::string& username) {
  auto users = env.master.Get("/api/v1/users");
  if (!users.ok()) return users.status();
  for (const auto& u : Member(*users, "users"))
    if (GetString(u, "username") == username) return u;
  return NotFound("no user " + username);
}

// Signs in and saves the token; prints nothing.
Result<nlohmann::json> SignIn(CliEnv& env, const std::string& username, const std::string& password) {
  auto res = env.master.Post("/api/v1/auth/login", {{"username", username}, {"password", password}});
  if (!res.ok()) return res.status();
  const std::string token = GetString(*res, "token");
  if (Status s = SaveToken(env.master.url().ToString(), {username, token, GetString(*res, "expires_at")});
      !s.ok())
    return s;
  env.master.SetToken(token);
  return res;
}

}  // namespace

int Login(CliEnv& env, const UserOptions& o) {
  std::string username = o.username;
  if (username.empty()) {
    const char* user = std::getenv("USER");
    username = user != nullptr ? user : "";
  }
  if (username.empty()) return env.Fail(InvalidArgument("name the user: ring user login USERNAME"));
  auto password = ReadPassword(env, o.password_file, "password for " + username, false);
  if (!password.ok()) return env.Fail(password.status());
  auto res = SignIn(env, username, *password);
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    nlohmann::json shown = *res;
    shown.erase("token");
    env.out << shown.dump(2) << '\n';
    return kExitOk;
  }
  env.out << "Signed in to " << env.master.url().ToString() << " as " << username << " ("
          << GetString(Member(*res, "user"), "role") << ") until " << GetString(*res, "expires_at")
          << "; the token is kept in " << CredentialsPath() << '\n';
  return kExitOk;
}

int Logout(CliEnv& env) {
  const std::string url = env.master.url().ToString();
  if (LoadToken(url)) {
    auto res = env.master.Post("/api/v1/auth/logout", nlohmann::json::object());
    if (!res.ok() && res.status().code() != ErrorCode::kUnauthenticated) return env.Fail(res.status());
  }
  if (Status s = ForgetToken(url); !s.ok()) return env.Fail(s);
  env.out << "Signed out of " << url << '\n';
  return kExitOk;
}

int WhoAmI(CliEnv& env) {
  auto me = env.master.Get("/api/v1/users/me");
  if (!me.ok()) return env.Fail(me.status());
  if (env.json) {
    env.out << me->dump(2) << '\n';
    return kExitOk;
  }
  env.out << Field(*me, "username") << " (" << Field(*me, "role") << ") at " << env.master.url().ToString()
          << '\n';
  return kExitOk;
}

int CreateUser(CliEnv& env, const UserOptions& o) {
  auto password = ReadPassword(env, o.password_file, "password for " + o.username, true);
  if (!password.ok()) return env.Fail(password.status());
  auto res = env.master.Post(
      "/api/v1/users",
      {{"username", o.username}, {"password", *password}, {"role", o.admin ? "admin" : "user"}});
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  env.out << "Created user " << Field(*res, "username") << " (" << Field(*res, "role") << "), id "
          << Field(*res, "id") << '\n';
  return kExitOk;
}

int ListUsers(CliEnv& env) {
  auto res = env.master.Get("/api/v1/users");
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  Table table({"id", "username", "role", "active", "unix account", "created"});
  for (const auto& u : Member(*res, "users"))
    table.AddRow({Field(u, "id"), Field(u, "username"), Field(u, "role"), Field(u, "active"),
                  DescribeUnixAccount(Member(u, "unix")), Field(u, "created_at")});
  table.Print(env.out);
  return kExitOk;
}

int ChangePassword(CliEnv& env, const UserOptions& o) {
  auto me = env.master.Get("/api/v1/users/me");
  if (!me.ok()) return env.Fail(me.status());
  const bool self = o.username.empty() || o.username == GetString(*me, "username");
  Result<nlohmann::json> user = *me;
  if (!self) user = FindUser(env, o.username);
  if (!user.ok()) return env.Fail(user.status());
  const std::string name = GetString(*user, "username");
  nlohmann::json patch = nlohmann::json::object();
  if (self) {  // the master wants the current password of whoever changes their own
    auto current = ReadPassword(env, o.current_password_file, "current password of " + name, false);
    if (!current.ok()) return env.Fail(current.status());
    patch["current_password"] = *current;
  }
  auto password = ReadPassword(env, o.password_file, "new password for " + name, true);
  if (!password.ok()) return env.Fail(password.status());
  patch["password"] = *password;
  auto res = env.master.Patch("/api/v1/users/" + Field(*user, "id"), patch);
  if (!res.ok()) return env.Fail(res.status());
  // A new password ends the user's sessions, this one too: sign in again.
  if (self) {
    if (auto again = SignIn(env, name, *password); !again.ok()) return env.Fail(again.status());
  }
  env.out << "Changed the password of " << name << (self ? "; signed in again" : "; their sessions ended")
          << '\n';
  return kExitOk;
}

int SetUserActive(CliEnv& env, const std::string& username, bool active) {
  auto user = FindUser(env, username);
  if (!user.ok()) return env.Fail(user.status());
  auto res = env.master.Patch("/api/v1/users/" + Field(*user, "id"), {{"active", active}});
  if (!res.ok()) return env.Fail(res.status());
  env.out << (active ? "Activated " : "Deactivated ") << username << '\n';
  return kExitOk;
}

int LinkUnix(CliEnv& env, const UnixLinkOptions& o) {
  auto unix = ResolveUnixAccount(o);
  if (!unix.ok()) return env.Fail(unix.status());
  auto user = FindUser(env, o.username);
  if (!user.ok()) return env.Fail(user.status());
  auto res = env.master.Patch("/api/v1/users/" + Field(*user, "id"), {{"unix", *unix}});
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  env.out << "Linked " << o.username << " to the Unix account " << DescribeUnixAccount(Member(*res, "unix"))
          << "; agents that switch users run their tasks as it\n";
  return kExitOk;
}

int UnlinkUnix(CliEnv& env, const std::string& username) {
  auto user = FindUser(env, username);
  if (!user.ok()) return env.Fail(user.status());
  auto res = env.master.Patch("/api/v1/users/" + Field(*user, "id"), {{"unix", nullptr}});
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  env.out << "Unlinked " << username
          << " from its Unix account; agents run their tasks as their unprivileged default account\n";
  return kExitOk;
}

}  // namespace ring::cli
