#pragma once
// Accounts: users, their sign-in sessions and the admin made at first start.
// Passwords are kept as Argon2id hashes and session tokens as their SHA-256,
// both in the Store. Signing in fails slowly on purpose: after
// `max_failed_logins` wrong passwords in a row for one user from one address,
// that pair waits (1 s, doubling, up to 5 min) before it may try again, and
// the answer says how long. A guesser spread over many addresses is slowed
// per user: after `max_failed_logins_per_user` failures in a row from any
// addresses, addresses the user has not signed in from (since the master
// started) wait 1 s, doubling up to 1 min. The addresses the user did sign
// in from are never held by this, so nobody can lock the admin out of their
// own machine, and no wait lasts longer than a minute after the guessing
// stops. Thread-safe; Login, CreateUser and ChangeUser hash passwords (about
// 0.1 s each), so call them off the network threads.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/auth/principal.h"
#include "master/store/store.h"

namespace ring {

struct AccountsOptions {
  std::chrono::seconds session_ttl{std::chrono::hours(24 * 7)};
  int max_failed_logins = 5;            // in a row, per user and address
  int max_failed_logins_per_user = 20;  // in a row, per user from any address
};

// PATCH /users/{id}, decoded: what to change (at least one).
struct UserPatch {
  std::optional<std::string> password;
  std::optional<UserRole> role;
  std::optional<bool> active;
  // Set: link the user to this account, or unlink them (the inner nullopt).
  std::optional<std::optional<UserUnixAccount>> unix_account;
  // Needed when a user changes their own password; admins resetting another
  // user's password do without it.
  std::optional<std::string> current_password;
};

struct LoginResult {
  std::string token;  // shown once; the store keeps its hash
  std::string expires_at;
  UserRecord user;
};

class Accounts {
 public:
  using Clock = std::chrono::system_clock;
  explicit Accounts(Store& store, AccountsOptions options = {});

  // At first start (no user exists) creates "admin" with the password in
  // `password_file` (trimmed of surrounding white space), or a new random
  // password when `password_file` is empty, which is returned so the caller
  // can print it once. Returns nullopt when users already exist or the
  // password came from the file.
  Result<std::optional<std::string>> EnsureAdmin(const std::string& password_file);

  // kUnauthenticated for a wrong name or password (the same message for
  // both) and for a deactivated user; kTooManyRequests while locked out.
  // While locked out, `retry_after` (when given) receives the wait in seconds.
  Result<LoginResult> Login(const std::string& username, const std::string& password, const std::string& peer,
                            int64_t* retry_after = nullptr);
  Status Logout(const std::string& token);
  // The user a bearer token signs in; kUnauthenticated with a message that
  // says what to do when the token is missing, unknown or expired.
  Result<Principal> Authenticate(const std::string& token);

  // Admins only (kPermissionDenied otherwise). Names: 1-64 of letters,
  // digits, '.', '_' and '-', starting with a letter or digit.
  Result<UserRecord> CreateUser(const Principal& actor, const std::string& username,
                                const std::string& password, UserRole role);
  // The password: the user themself, who must give the current one
  // (kInvalidArgument when missing, kPermissionDenied when wrong, counted
  // like a failed sign-in from `peer`), or an admin; the role and active:
  // admins, never on themselves; the Unix account: admins only. A new
  // password or deactivation ends the user's sessions.
  Result<UserRecord> ChangeUser(const Principal& actor, int64_t id, const UserPatch& patch,
                                const std::string& peer = "");
  Result<std::vector<UserRecord>> ListUsers();
  Result<UserRecord> GetUser(int64_t id);

  // Test seam: the clock sessions and lockouts read.
  void SetClockForTest(std::function<Clock::time_point()> now) { now_ = std::move(now); }

 private:
  struct Failures {
    int count = 0;
    Clock::time_point locked_until{};
  };
  Status CheckLockout(const std::string& key, const std::string& username, const std::string& peer,
                      int64_t& wait_seconds);
  void NoteFailure(const std::string& key, const std::string& username);
  void NoteSuccess(const std::string& key, const std::string& username, const std::string& peer);

  Store& store_;
  AccountsOptions options_;
  std::function<Clock::time_point()> now_ = [] { return Clock::now(); };
  std::mutex mu_;
  std::map<std::string, Failures> failures_;  // by "username|address"
  struct UserFailures {
    Failures failures;
    std::vector<std::string> known_addresses;  // signed in from, newest last, at most 16
  };
  std::map<std::string, UserFailures> user_failures_;  // by username
};

Status CheckUsername(const std::string& username);

}  // namespace ring
