// SqliteStore: opening the database, and the experiments table.
#include "master/store/sqlite_store.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "master/store/migrator.h"
#include "master/store/sqlite_db.h"
#include "master/store/store_util.h"

namespace ring {
namespace {

// Per-connection settings, set before anything else: waits up to 5 s for a
// lock held by another process, enforces foreign keys, and fsyncs every commit.
// journal_mode is set apart because it answers with the mode actually in effect.
constexpr const char* kPragmas =
    "PRAGMA busy_timeout = 5000;"
    "PRAGMA foreign_keys = ON;"
    "PRAGMA synchronous = FULL;";

Status SetJournalModeWal(SqliteDb& db, const std::string& path) {
  Result<Stmt> pragma = db.Prepare("PRAGMA journal_mode = WAL");
  if (!pragma.ok()) return pragma.status();
  Result<bool> row = pragma->Step();
  if (!row.ok()) return row.status();
  std::string mode = *row ? pragma->Text(0) : "";
  // An in-memory database (":memory:", tests) cannot use WAL and says "memory".
  if (mode == "wal" || (mode == "memory" && path == ":memory:")) return Status::Ok();
  return Internal("database " + path + ": journal_mode is '" + mode + "', expected 'wal'");
}

// Retention deletes old logs and metrics; with auto_vacuum = INCREMENTAL the
// pages they used can be given back a slice at a time (SqliteStore::Compact).
// A new database gets it before its first table; one made without it is
// converted once, by VACUUM, which rewrites the file.
Status UseIncrementalVacuum(SqliteDb& db, const std::string& path) {
  {
    Result<Stmt> mode = db.Prepare("PRAGMA auto_vacuum");  // reset when it goes out of scope
    if (!mode.ok()) return mode.status();
    Result<bool> row = mode->Step();
    if (!row.ok()) return row.status();
    if (*row && mode->Int(0) == 2) return Status::Ok();
  }
  if (Status s = db.Exec("PRAGMA auto_vacuum = INCREMENTAL", "database " + path + ": set auto_vacuum");
      !s.ok())
    return s;
  return db.Exec("VACUUM", "database " + path + ": VACUUM to turn on incremental vacuum");
}

constexpr const char* kExperimentColumns =
    "id, name, owner, config_yaml, state, archived, progress, best_trial_id, best_validation, created_at, "
    "ended_at, warm_start_checkpoint, description, labels_json, deleting_at, parent_id, project_id";

Result<ExperimentRecord> ReadExperiment(const Stmt& s) {
  ExperimentRecord e;
  e.id = s.Int(0);
  e.name = s.Text(1);
  e.owner = s.Text(2);
  e.config_yaml = s.Text(3);
  std::string state = s.Text(4);
  std::optional<RunState> parsed = ParseRunState(state);
  if (!parsed) return Internal("experiment " + std::to_string(e.id) + " has unknown state '" + state + "'");
  e.state = *parsed;
  e.archived = s.Int(5) != 0;
  e.progress = s.Double(6);
  e.best_trial_id = s.OptInt(7);
  e.best_validation = s.OptDouble(8);
  e.created_at = s.Text(9);
  e.ended_at = s.Text(10);
  e.warm_start_checkpoint = s.Text(11);
  if (!s.IsNull(12)) e.description = s.Text(12);
  if (!s.IsNull(13)) {
    const auto labels = nlohmann::json::parse(s.Text(13), nullptr, false);
    if (!labels.is_array())
      return Internal("experiment " + std::to_string(e.id) + " has labels that are not a JSON list");
    e.labels.emplace();
    for (const auto& l : labels)
      if (l.is_string()) e.labels->push_back(l.get<std::string>());
  }
  e.deleting = !s.IsNull(14);
  e.parent_id = s.OptInt(15);
  e.project_id = s.Int(16);
  return e;
}

}  // namespace

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       std::vector<Migration> migrations) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) return db.status();
  SqliteDb& conn = **db;
  if (Status s = conn.Exec(kPragmas, "database " + path + ": set pragmas"); !s.ok()) return s;
  if (Status s = SetJournalModeWal(conn, path); !s.ok()) return s;
  if (Status s = UseIncrementalVacuum(conn, path); !s.ok()) return s;
  Result<int> version = ApplyMigrations(conn, migrations);
  if (!version.ok()) return WithContext(version.status(), "database " + path);
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(db).value(), *version));
}

SqliteStore::SqliteStore(std::unique_ptr<SqliteDb> db, int schema_version)
    : db_(std::move(db)), schema_version_(schema_version) {}

SqliteStore::~SqliteStore() = default;

Result<int64_t> SqliteStore::CreateExperiment(const ExperimentRecord& e, const std::string& model_tar_gz) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO experiments (name, owner, config_yaml, state, archived, progress, best_trial_id, "
      "best_validation, created_at, ended_at, model_definition, warm_start_checkpoint, parent_id, "
      "project_id) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, id FROM projects WHERE id "
      "= ?14");
  if (!insert.ok()) return insert.status();
  const std::string now = NowRfc3339();
  insert->Bind(1, e.name).Bind(2, e.owner).Bind(3, e.config_yaml).Bind(4, ToString(e.state));
  insert->Bind(5, int64_t{e.archived})
      .Bind(6, e.progress)
      .Bind(7, e.best_trial_id)
      .Bind(8, e.best_validation);
  insert->Bind(9, now).BindTextOrNull(10, EndedAt(IsTerminal(e.state), e.ended_at, "", now));
  insert->BindBlob(11, model_tar_gz);
  insert->BindTextOrNull(12, e.warm_start_checkpoint);
  insert->Bind(13, e.parent_id).Bind(14, e.project_id);
  if (Status s = insert->Run(); !s.ok()) return WithContext(s, "create experiment");
  if (db_->Changes() == 0)
    return InvalidArgument("create experiment: project " + std::to_string(e.project_id) + " does not exist");
  return db_->LastInsertRowid();
}

Result<ExperimentRecord> SqliteStore::GetExperiment(int64_t id) {
  std::lock_guard lock(mu_);
  static const std::string sql =
      std::string("SELECT ") + kExperimentColumns + " FROM experiments WHERE id = ?1";
  Result<Stmt> select = db_->Prepare(sql.c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("experiment " + std::to_string(id) + " not found");
  return ReadExperiment(*select);
}

Result<Page<ExperimentRecord>> SqliteStore::ListExperiments(int64_t limit, int64_t offset) {
  if (Status s = CheckPage(limit, offset); !s.ok()) return s;
  std::lock_guard lock(mu_);
  Page<ExperimentRecord> page;
  {
    Result<Stmt> count = db_->Prepare("SELECT COUNT(*) FROM experiments");
    if (!count.ok()) return count.status();
    Result<bool> row = count->Step();
    if (!row.ok()) return row.status();
    page.total = count->Int(0);
  }
  static const std::string sql =
      std::string("SELECT ") + kExperimentColumns + " FROM experiments ORDER BY id LIMIT ?1 OFFSET ?2";
  Result<Stmt> select = db_->Prepare(sql.c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, limit).Bind(2, offset);
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    Result<ExperimentRecord> e = ReadExperiment(*select);
    if (!e.ok()) return e.status();
    page.items.push_back(std::move(e).value());
  }
  return page;
}

Result<std::string> SqliteStore::GetModelDefinition(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare("SELECT model_definition FROM experiments WHERE id = ?1");
  if (!select.ok()) return select.status();
  select->Bind(1, experiment_id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("experiment " + std::to_string(experiment_id) + " not found");
  return select->Blob(0);
}

// The incremental blob API reads only the pages that hold the piece; the
// handle is opened per piece, so no read transaction outlives the lock.
Result<BlobPiece> SqliteStore::ReadModelDefinition(int64_t experiment_id, int64_t offset, char* out,
                                                   size_t size) {
  std::lock_guard lock(mu_);
  sqlite3_blob* blob = nullptr;
  int rc = sqlite3_blob_open(db_->raw(), "main", "experiments", "model_definition", experiment_id, 0, &blob);
  if (rc != SQLITE_OK) {
    Status s = SqliteStatus(db_->raw(), rc, "open the model definition");
    sqlite3_blob_close(blob);
    Result<Stmt> exists = db_->Prepare("SELECT 1 FROM experiments WHERE id = ?1");
    if (!exists.ok()) return exists.status();
    exists->Bind(1, experiment_id);
    Result<bool> row = exists->Step();
    if (!row.ok()) return row.status();
    if (!*row) return NotFound("experiment " + std::to_string(experiment_id) + " not found");
    return s;
  }
  BlobPiece piece;
  piece.total = sqlite3_blob_bytes(blob);
  if (offset < 0 || offset > piece.total) {
    sqlite3_blob_close(blob);
    return InvalidArgument("offset " + std::to_string(offset) + " is past the model definition's " +
                           std::to_string(piece.total) + " bytes");
  }
  piece.bytes = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(size), piece.total - offset));
  if (piece.bytes > 0)
    rc = sqlite3_blob_read(blob, out, static_cast<int>(piece.bytes), static_cast<int>(offset));
  const int closed = sqlite3_blob_close(blob);
  if (rc == SQLITE_OK) rc = closed;
  if (rc != SQLITE_OK) return SqliteStatus(db_->raw(), rc, "read the model definition");
  return piece;
}

Status SqliteStore::UpdateExperiment(const ExperimentRecord& e) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare(
      "UPDATE experiments SET state = ?2, archived = ?3, progress = ?4, best_trial_id = ?5, "
      "best_validation = ?6, ended_at = COALESCE(?7, CASE WHEN ?8 THEN COALESCE(ended_at, ?9) END) "
      "WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, e.id).Bind(2, ToString(e.state)).Bind(3, int64_t{e.archived}).Bind(4, e.progress);
  update->Bind(5, e.best_trial_id).Bind(6, e.best_validation).BindTextOrNull(7, e.ended_at);
  update->Bind(8, int64_t{IsTerminal(e.state)}).Bind(9, NowRfc3339());
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update experiment " + std::to_string(e.id));
  if (db_->Changes() == 0) return NotFound("experiment " + std::to_string(e.id) + " not found");
  return Status::Ok();
}

Status SqliteStore::SetExperimentInfo(int64_t id, const ExperimentInfo& info) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare(
      "UPDATE experiments SET name = COALESCE(?2, name), description = CASE WHEN ?3 THEN ?4 ELSE description "
      "END, labels_json = CASE WHEN ?5 THEN ?6 ELSE labels_json END WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, id).BindTextOrNull(2, info.name.value_or(""));
  update->Bind(3, int64_t{info.description.has_value()}).Bind(4, info.description.value_or(""));
  update->Bind(5, int64_t{info.labels.has_value()})
      .Bind(6, info.labels ? nlohmann::json(*info.labels).dump() : std::string());
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update experiment " + std::to_string(id));
  if (db_->Changes() == 0) return NotFound("experiment " + std::to_string(id) + " not found");
  return Status::Ok();
}

Status SqliteStore::SetExperimentConfig(int64_t id, const std::string& config_yaml) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare("UPDATE experiments SET config_yaml = ?2 WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, id).Bind(2, config_yaml);
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update experiment " + std::to_string(id));
  if (db_->Changes() == 0) return NotFound("experiment " + std::to_string(id) + " not found");
  return Status::Ok();
}

Status SqliteStore::MarkExperimentDeleting(int64_t id) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  Result<Stmt> update =
      db_->Prepare("UPDATE experiments SET deleting_at = COALESCE(deleting_at, ?2) WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, id).Bind(2, NowRfc3339());
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "delete experiment " + std::to_string(id));
  if (db_->Changes() == 0) return NotFound("experiment " + std::to_string(id) + " not found");
  return Status::Ok();
}

Result<std::vector<int64_t>> SqliteStore::ListDeletingExperiments() {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare("SELECT id FROM experiments WHERE deleting_at IS NOT NULL ORDER BY id");
  if (!select.ok()) return select.status();
  std::vector<int64_t> ids;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    ids.push_back(select->Int(0));
  }
  return ids;
}

Status SqliteStore::DeleteExperiment(int64_t id) {
  const WriteNotice changes(experiments_generation_);
  const WriteNotice metrics(metrics_generation_);
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  Result<Stmt> exists = db_->Prepare("SELECT 1 FROM experiments WHERE id = ?1");
  if (!exists.ok()) return exists.status();
  exists->Bind(1, id);
  Result<bool> found = exists->Step();
  if (!found.ok()) return found.status();
  if (!*found) return NotFound("experiment " + std::to_string(id) + " not found");
  if (Result<bool> done = exists->Step(); !done.ok()) return done.status();
  // Another experiment that warm-starts from one of its checkpoints keeps it.
  Result<Stmt> source = db_->Prepare(
      "SELECT e.id, c.uuid FROM experiments e JOIN checkpoints c ON e.warm_start_checkpoint = c.uuid "
      "WHERE e.id <> ?1 AND c.trial_id IN (SELECT id FROM trials WHERE experiment_id = ?1) LIMIT 1");
  if (!source.ok()) return source.status();
  source->Bind(1, id);
  Result<bool> kept = source->Step();
  if (!kept.ok()) return kept.status();
  if (*kept) {
    const std::string other = std::to_string(source->Int(0)), uuid = source->Text(1);
    (void)source->Step();
    return Status(ErrorCode::kConflict, "experiment " + other + " starts from checkpoint " + uuid +
                                            " of experiment " + std::to_string(id));
  }
  // A model version keeps its checkpoint (as its foreign key would).
  Result<Stmt> version = db_->Prepare(
      "SELECT v.checkpoint_uuid, v.version, m.name FROM model_versions v JOIN models m ON m.id = v.model_id "
      "JOIN checkpoints c ON c.uuid = v.checkpoint_uuid "
      "WHERE c.trial_id IN (SELECT id FROM trials WHERE experiment_id = ?1) ORDER BY m.name, v.version LIMIT "
      "1");
  if (!version.ok()) return version.status();
  version->Bind(1, id);
  Result<bool> is_version = version->Step();
  if (!is_version.ok()) return is_version.status();
  if (*is_version) {
    const std::string uuid = version->Text(0), number = std::to_string(version->Int(1)),
                      model = version->Text(2);
    (void)version->Step();
    return Conflict("checkpoint " + uuid + " of experiment " + std::to_string(id) + " is version " + number +
                    " of model " + model);
  }
  // Children first (foreign keys are on); ?1 is the experiment.
  constexpr const char* kTrials = "(SELECT id FROM trials WHERE experiment_id = ?1)";
  constexpr const char* kTasks =
      "(SELECT task_id FROM trials WHERE experiment_id = ?1 AND task_id IS NOT NULL)";
  const std::string statements[] = {
      "UPDATE experiments SET best_trial_id = NULL WHERE id = ?1",
      "UPDATE experiments SET parent_id = NULL WHERE parent_id = ?1",
      std::string("DELETE FROM metrics WHERE trial_id IN ") + kTrials,
      std::string("DELETE FROM logs WHERE trial_id IN ") + kTrials,
      std::string("DELETE FROM log_policy_matches WHERE trial_id IN ") + kTrials,
      std::string("DELETE FROM checkpoint_reservations WHERE trial_id IN ") + kTrials,
      std::string("DELETE FROM checkpoints WHERE trial_id IN ") + kTrials,
      std::string(
          "DELETE FROM slurm_jobs WHERE allocation_id IN (SELECT id FROM allocations WHERE trial_id IN ") +
          kTrials + ")",
      std::string("DELETE FROM allocations WHERE trial_id IN ") + kTrials,
      std::string("DELETE FROM task_logs WHERE task_id IN ") + kTasks,
      "CREATE TEMP TABLE IF NOT EXISTS deleted_tasks (id INTEGER PRIMARY KEY)",
      "DELETE FROM temp.deleted_tasks",
      std::string(
          "INSERT INTO temp.deleted_tasks SELECT task_id FROM trials WHERE experiment_id = ?1 AND task_id "
          "IS NOT NULL"),
      "DELETE FROM trials WHERE experiment_id = ?1",
      "DELETE FROM tasks WHERE id IN (SELECT id FROM temp.deleted_tasks)",
      "DELETE FROM searcher_snapshots WHERE experiment_id = ?1",
      "DELETE FROM experiment_resources WHERE experiment_id = ?1",
      "DELETE FROM experiments WHERE id = ?1",
  };
  for (const auto& sql : statements) {
    Result<Stmt> stmt = db_->Prepare(sql.c_str());
    if (!stmt.ok()) return stmt.status();
    if (sql.find("?1") != std::string::npos) stmt->Bind(1, id);
    if (Status s = stmt->Run(); !s.ok()) return WithContext(s, "delete experiment " + std::to_string(id));
  }
  return tx.Commit();
}

Result<std::vector<std::string>> SqliteStore::ListLiveWarmStarts() {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT DISTINCT warm_start_checkpoint FROM experiments WHERE warm_start_checkpoint IS NOT NULL "
      "AND state NOT IN ('COMPLETED', 'CANCELED', 'ERROR') ORDER BY warm_start_checkpoint");
  if (!select.ok()) return select.status();
  std::vector<std::string> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(select->Text(0));
  }
  return out;
}

Result<std::vector<int64_t>> SqliteStore::ListWarmStartedFrom(int64_t trial_id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT id FROM experiments WHERE deleting_at IS NULL AND warm_start_checkpoint IN "
      "(SELECT uuid FROM checkpoints WHERE trial_id = ?1) ORDER BY id");
  if (!select.ok()) return select.status();
  select->Bind(1, trial_id);
  std::vector<int64_t> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(select->Int(0));
  }
  return out;
}

}  // namespace ring
