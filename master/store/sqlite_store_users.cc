// SqliteStore: users and sessions.
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {
namespace {

#define RING_USER_COLUMNS                                                                         \
  "SELECT id, username, password_hash, role, active, created_at, unix_uid, unix_gid, unix_user, " \
  "unix_group FROM users "
constexpr const char* kUserById = RING_USER_COLUMNS "WHERE id = ?1";
constexpr const char* kUserByName = RING_USER_COLUMNS "WHERE username = ?1";
constexpr const char* kUsersById = RING_USER_COLUMNS "ORDER BY id";
#undef RING_USER_COLUMNS

Result<UserRecord> ReadUser(const Stmt& s) {
  UserRecord u;
  u.id = s.Int(0);
  u.username = s.Text(1);
  u.password_hash = s.Text(2);
  const std::string role = s.Text(3);
  const std::optional<UserRole> parsed = ParseUserRole(role);
  if (!parsed) return Internal("user " + std::to_string(u.id) + " has unknown role '" + role + "'");
  u.role = *parsed;
  u.active = s.Int(4) != 0;
  u.created_at = s.Text(5);
  if (!s.IsNull(6)) u.unix_account = UserUnixAccount{s.Int(6), s.Int(7), s.Text(8), s.Text(9)};
  return u;
}

}  // namespace

Result<int64_t> SqliteStore::CreateUser(const UserRecord& u) {
  std::lock_guard lock(mu_);
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO users (username, password_hash, role, active, created_at) VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, u.username).Bind(2, u.password_hash).Bind(3, ToString(u.role)).Bind(4, int64_t{u.active});
  insert->Bind(5, NowRfc3339());
  if (Status s = insert->Run(); !s.ok()) return WithContext(s, "create user '" + u.username + "'");
  return db_->LastInsertRowid();
}

Result<UserRecord> SqliteStore::GetUser(int64_t id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(kUserById);
  if (!select.ok()) return select.status();
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("user " + std::to_string(id) + " not found");
  return ReadUser(*select);
}

Result<UserRecord> SqliteStore::GetUserByName(const std::string& username) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(kUserByName);
  if (!select.ok()) return select.status();
  select->Bind(1, username);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("user '" + username + "' not found");
  return ReadUser(*select);
}

Result<std::vector<UserRecord>> SqliteStore::ListUsers() {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(kUsersById);
  if (!select.ok()) return select.status();
  std::vector<UserRecord> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<UserRecord> user = ReadUser(*select);
    if (!user.ok()) return user.status();
    out.push_back(std::move(user).value());
  }
}

Status SqliteStore::UpdateUser(const UserRecord& u) {
  std::lock_guard lock(mu_);
  Result<Stmt> update =
      db_->Prepare("UPDATE users SET password_hash = ?2, role = ?3, active = ?4 WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, u.id).Bind(2, u.password_hash).Bind(3, ToString(u.role)).Bind(4, int64_t{u.active});
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update user " + std::to_string(u.id));
  if (db_->Changes() == 0) return NotFound("user " + std::to_string(u.id) + " not found");
  return Status::Ok();
}

Status SqliteStore::SetUserUnixAccount(int64_t id, const std::optional<UserUnixAccount>& account) {
  if (Status s = CheckUnixIds(account); !s.ok()) return s;
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare(
      "UPDATE users SET unix_uid = ?2, unix_gid = ?3, unix_user = ?4, unix_group = ?5 WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, id);
  if (account) {
    update->Bind(2, account->uid).Bind(3, account->gid).Bind(4, account->user).Bind(5, account->group);
  } else {
    update->BindNull(2).BindNull(3).Bind(4, std::string()).Bind(5, std::string());
  }
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "link user " + std::to_string(id));
  if (db_->Changes() == 0) return NotFound("user " + std::to_string(id) + " not found");
  return Status::Ok();
}

Status SqliteStore::CreateSession(const SessionRecord& s) {
  std::lock_guard lock(mu_);
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, s.token_hash).Bind(2, s.user_id).Bind(3, NowRfc3339()).Bind(4, s.expires_at);
  return WithContext(insert->Run(), "create session");
}

Result<SessionRecord> SqliteStore::GetSession(const std::string& token_hash) {
  std::lock_guard lock(mu_);
  Result<Stmt> select =
      db_->Prepare("SELECT token_hash, user_id, created_at, expires_at FROM sessions WHERE token_hash = ?1");
  if (!select.ok()) return select.status();
  select->Bind(1, token_hash);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("no such session");
  return SessionRecord{select->Text(0), select->Int(1), select->Text(2), select->Text(3)};
}

Status SqliteStore::DeleteSession(const std::string& token_hash) {
  std::lock_guard lock(mu_);
  Result<Stmt> del = db_->Prepare("DELETE FROM sessions WHERE token_hash = ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, token_hash);
  return WithContext(del->Run(), "delete session");
}

Status SqliteStore::DeleteUserSessions(int64_t user_id) {
  std::lock_guard lock(mu_);
  Result<Stmt> del = db_->Prepare("DELETE FROM sessions WHERE user_id = ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, user_id);
  return WithContext(del->Run(), "delete sessions of user " + std::to_string(user_id));
}

Result<int64_t> SqliteStore::DeleteExpiredSessions(const std::string& now) {
  std::lock_guard lock(mu_);
  Result<Stmt> del = db_->Prepare("DELETE FROM sessions WHERE expires_at < ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, now);
  if (Status s = del->Run(); !s.ok()) return WithContext(s, "delete expired sessions");
  return db_->Changes();
}

}  // namespace ring
