// MemoryStore: users and sessions.
#include "master/store/memory_store.h"
#include "master/store/store_util.h"

namespace ring {

Result<int64_t> MemoryStore::CreateUser(const UserRecord& u) {
  std::lock_guard lock(mu_);
  for (const auto& [id, existing] : users_)
    if (existing.username == u.username)
      return Conflict("create user '" + u.username + "': the name is taken");
  UserRecord r = u;
  r.id = next_user_id_++;
  r.unix_account.reset();  // linked only through SetUserUnixAccount, as in SQLite
  r.created_at = NowRfc3339();
  users_.emplace(r.id, r);
  return r.id;
}

Result<UserRecord> MemoryStore::GetUser(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = users_.find(id);
  if (it == users_.end()) return NotFound("user " + std::to_string(id) + " not found");
  return it->second;
}

Result<UserRecord> MemoryStore::GetUserByName(const std::string& username) {
  std::lock_guard lock(mu_);
  for (const auto& [id, u] : users_)
    if (u.username == username) return u;
  return NotFound("user '" + username + "' not found");
}

Result<std::vector<UserRecord>> MemoryStore::ListUsers() {
  std::lock_guard lock(mu_);
  std::vector<UserRecord> out;
  for (const auto& [id, u] : users_) out.push_back(u);
  return out;
}

Status MemoryStore::UpdateUser(const UserRecord& u) {
  std::lock_guard lock(mu_);
  auto it = users_.find(u.id);
  if (it == users_.end()) return NotFound("user " + std::to_string(u.id) + " not found");
  it->second.password_hash = u.password_hash;
  it->second.role = u.role;
  it->second.active = u.active;
  return Status::Ok();
}

Status MemoryStore::SetUserUnixAccount(int64_t id, const std::optional<UserUnixAccount>& account) {
  if (Status s = CheckUnixIds(account); !s.ok()) return s;
  std::lock_guard lock(mu_);
  auto it = users_.find(id);
  if (it == users_.end()) return NotFound("user " + std::to_string(id) + " not found");
  it->second.unix_account = account;
  return Status::Ok();
}

Status MemoryStore::CreateSession(const SessionRecord& s) {
  std::lock_guard lock(mu_);
  if (!users_.contains(s.user_id))
    return InvalidArgument("create session: no user " + std::to_string(s.user_id));
  if (sessions_.contains(s.token_hash)) return Conflict("create session: the token hash exists");
  SessionRecord r = s;
  r.created_at = NowRfc3339();
  sessions_.emplace(r.token_hash, r);
  return Status::Ok();
}

Result<SessionRecord> MemoryStore::GetSession(const std::string& token_hash) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(token_hash);
  if (it == sessions_.end()) return NotFound("no such session");
  return it->second;
}

Status MemoryStore::DeleteSession(const std::string& token_hash) {
  std::lock_guard lock(mu_);
  sessions_.erase(token_hash);
  return Status::Ok();
}

Status MemoryStore::DeleteUserSessions(int64_t user_id) {
  std::lock_guard lock(mu_);
  std::erase_if(sessions_, [&](const auto& kv) { return kv.second.user_id == user_id; });
  return Status::Ok();
}

Result<int64_t> MemoryStore::DeleteExpiredSessions(const std::string& now) {
  std::lock_guard lock(mu_);
  return static_cast<int64_t>(
      std::erase_if(sessions_, [&](const auto& kv) { return kv.second.expires_at < now; }));
}

}  // namespace ring
