// SqliteStore: agent enrolments.
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {

Status SqliteStore::PutAgentEnrolment(const AgentEnrolmentRecord& e) {
  std::lock_guard lock(mu_);
  if (e.agent_id.empty()) return InvalidArgument("put agent enrolment: agent_id must not be empty");
  Result<Stmt> put = db_->Prepare(
      "INSERT INTO agent_enrolments (agent_id, credential_hash, pool, slots, enrolled_at, revoked_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (agent_id) DO UPDATE SET "
      "credential_hash = excluded.credential_hash, pool = excluded.pool, slots = excluded.slots, "
      "enrolled_at = excluded.enrolled_at, revoked_at = excluded.revoked_at");
  if (!put.ok()) return put.status();
  put->Bind(1, e.agent_id).Bind(2, e.credential_hash).Bind(3, e.pool).Bind(4, e.slots).Bind(5, e.enrolled_at);
  if (e.revoked_at.empty())
    put->BindNull(6);
  else
    put->Bind(6, e.revoked_at);
  return WithContext(put->Run(), "put enrolment of agent '" + e.agent_id + "'");
}

Result<std::vector<AgentEnrolmentRecord>> SqliteStore::ListAgentEnrolments() {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT agent_id, credential_hash, pool, slots, enrolled_at, revoked_at FROM agent_enrolments "
      "ORDER BY agent_id");
  if (!select.ok()) return select.status();
  std::vector<AgentEnrolmentRecord> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    AgentEnrolmentRecord e;
    e.agent_id = select->Text(0);
    e.credential_hash = select->Text(1);
    e.pool = select->Text(2);
    e.slots = select->Int(3);
    e.enrolled_at = select->Text(4);
    if (!select->IsNull(5)) e.revoked_at = select->Text(5);
    out.push_back(std::move(e));
  }
}

}  // namespace ring
