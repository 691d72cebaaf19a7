#include "master/auth/accounts.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "master/auth/passwords.h"
#include "master/auth/tokens.h"

namespace ring {
namespace {

constexpr std::chrono::seconds kMaxLockout{300};
constexpr std::chrono::seconds kMaxUserLockout{60};
constexpr size_t kKnownAddresses = 16;
constexpr size_t kMaxTracked = 100000;  // entries kept; bounded memory under a flood of names
// Verified when the name is unknown, so a wrong name costs as long as a wrong
// password and timing does not tell which names exist.
const std::string& DummyHash() {
  static const std::string hash = *HashPassword("not a password of anyone");
  return hash;
}

Status WrongCredentials() {
  return {ErrorCode::kUnauthenticated, "wrong username or password"};
}

}  // namespace

Status CheckUsername(const std::string& username) {
  const auto ok_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  };
  if (username.empty() || username.size() > 64 || !std::all_of(username.begin(), username.end(), ok_char) ||
      !std::isalnum(static_cast<unsigned char>(username[0])))
    return InvalidArgument(
        "username must have 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit");
  return Status::Ok();
}

Accounts::Accounts(Store& store, AccountsOptions options) : store_(store), options_(options) {}

Result<std::optional<std::string>> Accounts::EnsureAdmin(const std::string& password_file) {
  auto users = store_.ListUsers();
  if (!users.ok()) return users.status();
  if (!users->empty()) return std::optional<std::string>();
  std::string password;
  if (!password_file.empty()) {
    std::ifstream in(password_file);
    if (!in) return InvalidArgument("cannot read the admin password file " + password_file);
    std::stringstream text;
    text << in.rdbuf();
    password = text.str();
    const auto first = password.find_first_not_of(" \t\r\n");
    const auto last = password.find_last_not_of(" \t\r\n");
    password = first == std::string::npos ? "" : password.substr(first, last - first + 1);
    if (Status s = CheckPasswordRules(password); !s.ok())
      return InvalidArgument("admin password file " + password_file + ": " + s.message());
  } else {
    password = NewPassword();
  }
  auto hash = HashPassword(password);
  if (!hash.ok()) return hash.status();
  auto id =
      store_.CreateUser(UserRecord{.username = "admin", .password_hash = *hash, .role = UserRole::kAdmin});
  if (!id.ok()) return id.status();
  if (!password_file.empty()) return std::optional<std::string>();
  return std::optional<std::string>(password);
}

Status Accounts::CheckLockout(const std::string& key, const std::string& username, const std::string& peer,
                              int64_t& wait_seconds) {
  std::lock_guard lock(mu_);
  const auto now = now_();
  if (auto it = failures_.find(key); it != failures_.end() && it->second.locked_until > now) {
    const auto wait = std::chrono::ceil<std::chrono::seconds>(it->second.locked_until - now).count();
    wait_seconds = wait;
    return {ErrorCode::kTooManyRequests,
            "too many failed sign-ins for this user from this address; try again in " + std::to_string(wait) +
                " s"};
  }
  auto it = user_failures_.find(username);
  if (it == user_failures_.end() || it->second.failures.locked_until <= now) return Status::Ok();
  const auto& known = it->second.known_addresses;
  if (std::find(known.begin(), known.end(), peer) != known.end()) return Status::Ok();
  const auto wait = std::chrono::ceil<std::chrono::seconds>(it->second.failures.locked_until - now).count();
  wait_seconds = wait;
  return {ErrorCode::kTooManyRequests,
          "too many failed sign-ins for this user from several addresses; try again in " +
              std::to_string(wait) + " s (addresses this user signed in from before are not held)"};
}

void Accounts::NoteFailure(const std::string& key, const std::string& username) {
  std::lock_guard lock(mu_);
  if (failures_.size() > kMaxTracked) failures_.clear();
  if (user_failures_.size() > kMaxTracked) user_failures_.clear();
  const auto now = now_();
  Failures& f = failures_[key];
  ++f.count;
  if (f.count >= options_.max_failed_logins) {
    const int doublings = std::min(f.count - options_.max_failed_logins, 9);
    f.locked_until = now + std::min(kMaxLockout, std::chrono::seconds(1) * (1 << doublings));
  }
  Failures& u = user_failures_[username].failures;
  ++u.count;
  if (u.count >= options_.max_failed_logins_per_user) {
    const int doublings = std::min(u.count - options_.max_failed_logins_per_user, 6);
    u.locked_until = now + std::min(kMaxUserLockout, std::chrono::seconds(1) * (1 << doublings));
  }
}

void Accounts::NoteSuccess(const std::string& key, const std::string& username, const std::string& peer) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
  if (user_failures_.size() > kMaxTracked) user_failures_.clear();
  UserFailures& u = user_failures_[username];
  u.failures = {};
  auto& known = u.known_addresses;
  known.erase(std::remove(known.begin(), known.end(), peer), known.end());
  known.push_back(peer);
  if (known.size() > kKnownAddresses) known.erase(known.begin());
}

Result<LoginResult> Accounts::Login(const std::string& username, const std::string& password,
                                    const std::string& peer, int64_t* retry_after) {
  const std::string name = username.substr(0, 64);
  const std::string key = name + "|" + peer;
  int64_t wait = 0;
  if (Status s = CheckLockout(key, name, peer, wait); !s.ok()) {
    if (retry_after != nullptr) *retry_after = wait;
    return s;
  }
  auto user = store_.GetUserByName(username);
  if (!user.ok() && user.status().code() != ErrorCode::kNotFound) return user.status();
  const bool match = VerifyPassword(password, user.ok() ? user->password_hash : DummyHash());
  if (!user.ok() || !match) {
    NoteFailure(key, name);
    spdlog::warn("[auth] failed sign-in for '{}' from {}", username.substr(0, 64), peer);
    return WrongCredentials();
  }
  NoteSuccess(key, name, peer);
  if (!user->active) return Status(ErrorCode::kUnauthenticated, "user " + username + " is deactivated");
  const auto now = now_();
  (void)store_.DeleteExpiredSessions(FormatRfc3339(now));
  LoginResult out{NewToken(), FormatRfc3339(now + options_.session_ttl), *user};
  if (Status s = store_.CreateSession({HashToken(out.token), user->id, "", out.expires_at}); !s.ok())
    return s;
  spdlog::info("[auth] {} signed in from {}", username, peer);
  return out;
}

Status Accounts::Logout(const std::string& token) {
  return store_.DeleteSession(HashToken(token));
}

Result<Principal> Accounts::Authenticate(const std::string& token) {
  if (token.empty())
    return Status(
        ErrorCode::kUnauthenticated,
        "sign in first: send \"Authorization: Bearer <token>\" with a token from POST /api/v1/auth/login "
        "(ring user login)");
  auto session = store_.GetSession(HashToken(token));
  if (!session.ok()) {
    if (session.status().code() != ErrorCode::kNotFound) return session.status();
    return Status(ErrorCode::kUnauthenticated,
                  "the token is not valid (signed out, or never issued); sign in again (ring user login)");
  }
  // An expired session is refused here and deleted at the next sign-in
  // (Login): this runs on the network threads, which never write.
  if (session->expires_at <= FormatRfc3339(now_())) {
    return Status(ErrorCode::kUnauthenticated,
                  "the token expired at " + session->expires_at + "; sign in again (ring user login)");
  }
  auto user = store_.GetUser(session->user_id);
  if (!user.ok()) return user.status();
  if (!user->active) return Status(ErrorCode::kUnauthenticated, "user " + user->username + " is deactivated");
  return Principal{user->id, user->username, user->role};
}

Result<UserRecord> Accounts::CreateUser(const Principal& actor, const std::string& username,
                                        const std::string& password, UserRole role) {
  if (!actor.admin()) return Status(ErrorCode::kPermissionDenied, "only an admin may create users");
  if (Status s = CheckUsername(username); !s.ok()) return s;
  auto hash = HashPassword(password);
  if (!hash.ok()) return hash.status();
  auto id = store_.CreateUser(UserRecord{.username = username, .password_hash = *hash, .role = role});
  if (!id.ok()) {
    if (id.status().code() == ErrorCode::kConflict) return Conflict("user " + username + " exists");
    return id.status();
  }
  spdlog::info("[auth] {} created user {} ({})", actor.username, username, ToString(role));
  return store_.GetUser(*id);
}

Result<UserRecord> Accounts::ChangeUser(const Principal& actor, int64_t id, const UserPatch& patch,
                                        const std::string& peer) {
  auto user = store_.GetUser(id);
  if (!user.ok()) return user.status();
  const bool self = actor.user_id == id;
  if (!actor.admin() && !self)
    return Status(ErrorCode::kPermissionDenied, "only an admin may change another user");
  if (!patch.password && !patch.role && !patch.active && !patch.unix_account)
    return InvalidArgument("the request body must be an object with password, role, active or unix");
  if (patch.unix_account && !actor.admin())
    return Status(ErrorCode::kPermissionDenied, "unix: only an admin may link a user to a Unix account");
  UserRecord next = *user;
  bool end_sessions = false;
  if (patch.role) {
    if (!actor.admin()) return Status(ErrorCode::kPermissionDenied, "only an admin may change roles");
    if (self) return Status(ErrorCode::kPermissionDenied, "an admin may not change their own role");
    next.role = *patch.role;
  }
  if (patch.active) {
    if (!actor.admin()) return Status(ErrorCode::kPermissionDenied, "only an admin may (de)activate users");
    if (self) return Status(ErrorCode::kPermissionDenied, "an admin may not deactivate themself");
    next.active = *patch.active;
    end_sessions = end_sessions || !next.active;
  }
  if (patch.password && self) {
    if (!patch.current_password)
      return InvalidArgument("current_password is required to change your own password");
    const std::string key = user->username + "|" + peer;
    int64_t wait_seconds = 0;
    if (Status s = CheckLockout(key, user->username, peer, wait_seconds); !s.ok()) return s;
    if (!VerifyPassword(*patch.current_password, user->password_hash)) {
      NoteFailure(key, user->username);
      spdlog::warn("[auth] {}: wrong current password from {}", user->username, peer);
      return Status(ErrorCode::kPermissionDenied, "current_password is not your current password");
    }
  }
  if (patch.password) {
    auto hash = HashPassword(*patch.password);
    if (!hash.ok()) return hash.status();
    next.password_hash = *hash;
    end_sessions = true;
  }
  if (Status s = store_.UpdateUser(next); !s.ok()) return s;
  if (patch.unix_account) {
    if (Status s = store_.SetUserUnixAccount(id, *patch.unix_account); !s.ok()) return s;
    next.unix_account = *patch.unix_account;
    if (next.unix_account)
      spdlog::info("[auth] {} linked user {} to Unix uid {} gid {}", actor.username, next.username,
                   next.unix_account->uid, next.unix_account->gid);
    else
      spdlog::info("[auth] {} unlinked user {} from its Unix account", actor.username, next.username);
  }
  if (end_sessions)
    if (Status s = store_.DeleteUserSessions(id); !s.ok()) return s;
  spdlog::info("[auth] {} changed user {}", actor.username, next.username);
  return next;
}

Result<std::vector<UserRecord>> Accounts::ListUsers() {
  return store_.ListUsers();
}

Result<UserRecord> Accounts::GetUser(int64_t id) {
  return store_.GetUser(id);
}

}  // namespace ring
