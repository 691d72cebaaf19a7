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

Status SqliteStore::PutSlurmJob(const SlurmJobRecord& j) {
  std::lock_guard lock(mu_);
  if (j.allocation_id.empty() || j.job_id <= 0)
    return InvalidArgument("put slurm job: allocation_id and a positive job_id are required");
  Result<Stmt> put = db_->Prepare(
      "INSERT INTO slurm_jobs (allocation_id, job_id, pool, credential_hash, per_node, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (allocation_id) DO UPDATE SET job_id = excluded.job_id, "
      "pool = excluded.pool, credential_hash = excluded.credential_hash, per_node = excluded.per_node");
  if (!put.ok()) return put.status();
  put->Bind(1, j.allocation_id)
      .Bind(2, j.job_id)
      .Bind(3, j.pool)
      .Bind(4, j.credential_hash)
      .Bind(5, int64_t{j.per_node ? 1 : 0})
      .Bind(6, NowRfc3339());
  return WithContext(put->Run(), "put Slurm job of allocation '" + j.allocation_id + "'");
}

Result<SlurmJobRecord> SqliteStore::GetSlurmJob(const std::string& allocation_id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT allocation_id, job_id, pool, credential_hash, per_node, created_at FROM slurm_jobs "
      "WHERE allocation_id = ?1");
  if (!select.ok()) return select.status();
  select->Bind(1, allocation_id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("no Slurm job for allocation " + allocation_id);
  SlurmJobRecord j;
  j.allocation_id = select->Text(0);
  j.job_id = select->Int(1);
  j.pool = select->Text(2);
  j.credential_hash = select->Text(3);
  j.per_node = select->Int(4) != 0;
  j.created_at = select->Text(5);
  return j;
}

Status SqliteStore::DeleteSlurmJob(const std::string& allocation_id) {
  std::lock_guard lock(mu_);
  Result<Stmt> del = db_->Prepare("DELETE FROM slurm_jobs WHERE allocation_id = ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, allocation_id);
  return WithContext(del->Run(), "delete Slurm job of allocation '" + allocation_id + "'");
}

}  // namespace ring
