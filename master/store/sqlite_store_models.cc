// SqliteStore: the model registry (models and model_versions, migration 0022).
#include <nlohmann/json.hpp>

#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {
namespace {

constexpr const char* kModelColumns =
    "SELECT m.id, m.name, m.description, m.labels_json, m.owner, m.archived, m.created_at, m.updated_at, "
    "(SELECT COUNT(*) FROM model_versions v WHERE v.model_id = m.id), m.last_version FROM models m ";

constexpr const char* kVersionColumns =
    "SELECT m.name, v.version, v.checkpoint_uuid, v.name, v.notes, v.metadata_json, v.labels_json, "
    "v.created_by, v.created_at, v.updated_at FROM model_versions v JOIN models m ON m.id = v.model_id ";

std::vector<std::string> LabelsFrom(const std::string& text) {
  std::vector<std::string> out;
  const auto labels = nlohmann::json::parse(text, nullptr, false);
  if (labels.is_array())
    for (const auto& l : labels)
      if (l.is_string()) out.push_back(l.get<std::string>());
  return out;
}

std::string LabelsJson(const std::vector<std::string>& labels) {
  return nlohmann::json(labels).dump();
}

ModelRecord ReadModel(const Stmt& s) {
  ModelRecord m;
  m.id = s.Int(0);
  m.name = s.Text(1);
  m.description = s.Text(2);
  m.labels = LabelsFrom(s.Text(3));
  m.owner = s.Text(4);
  m.archived = s.Int(5) != 0;
  m.created_at = s.Text(6);
  m.updated_at = s.Text(7);
  m.num_versions = s.Int(8);
  m.last_version = s.Int(9);
  return m;
}

ModelVersionRecord ReadVersion(const Stmt& s) {
  ModelVersionRecord v;
  v.model = s.Text(0);
  v.version = s.Int(1);
  v.checkpoint_uuid = s.Text(2);
  v.name = s.Text(3);
  v.notes = s.Text(4);
  v.metadata_json = s.Text(5);
  v.labels = LabelsFrom(s.Text(6));
  v.created_by = s.Text(7);
  v.created_at = s.Text(8);
  v.updated_at = s.Text(9);
  return v;
}

// Every row of a statement whose parameters are bound.
template <typename T, typename Read>
Result<std::vector<T>> ReadRows(Stmt& select, Read read) {
  std::vector<T> out;
  for (;;) {
    Result<bool> row = select.Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(read(select));
  }
}

Status NoModel(const std::string& name) {
  return NotFound("model \"" + name + "\" not found");
}

Status NoVersion(const std::string& model, int64_t version) {
  return NotFound("model \"" + model + "\" has no version " + std::to_string(version));
}

// mu_ held: the model named `name`.
Result<ModelRecord> SelectModel(SqliteDb& db, const std::string& name) {
  Result<Stmt> select = db.Prepare((std::string(kModelColumns) + "WHERE m.name = ?1").c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, name);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NoModel(name);
  ModelRecord m = ReadModel(*select);
  (void)select->Step();
  return m;
}

}  // namespace

Result<ModelRecord> SqliteStore::CreateModel(const ModelRecord& m) {
  std::lock_guard lock(mu_);
  if (m.name.empty()) return InvalidArgument("a model needs a name");
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO models (name, description, labels_json, owner, archived, created_at, updated_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, m.name)
      .Bind(2, m.description)
      .Bind(3, LabelsJson(m.labels))
      .Bind(4, m.owner)
      .Bind(5, int64_t{m.archived})
      .Bind(6, NowRfc3339());
  if (Status s = insert->Run(); !s.ok()) {
    if (s.code() == ErrorCode::kConflict) return Conflict("model \"" + m.name + "\" exists already");
    return WithContext(s, "create model " + m.name);
  }
  return SelectModel(*db_, m.name);
}

Result<ModelRecord> SqliteStore::GetModel(const std::string& name) {
  std::lock_guard lock(mu_);
  return SelectModel(*db_, name);
}

Result<std::vector<ModelRecord>> SqliteStore::ListModels() {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare((std::string(kModelColumns) + "ORDER BY m.name").c_str());
  if (!select.ok()) return select.status();
  return ReadRows<ModelRecord>(*select, ReadModel);
}

Status SqliteStore::UpdateModel(const std::string& name, const ModelUpdate& u) {
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare(
      "UPDATE models SET description = CASE WHEN ?2 THEN ?3 ELSE description END, "
      "labels_json = CASE WHEN ?4 THEN ?5 ELSE labels_json END, "
      "archived = CASE WHEN ?6 THEN ?7 ELSE archived END, updated_at = ?8 WHERE name = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, name)
      .Bind(2, int64_t{u.description.has_value()})
      .Bind(3, u.description.value_or(""))
      .Bind(4, int64_t{u.labels.has_value()})
      .Bind(5, u.labels ? LabelsJson(*u.labels) : std::string("[]"))
      .Bind(6, int64_t{u.archived.has_value()})
      .Bind(7, int64_t{u.archived.value_or(false)})
      .Bind(8, NowRfc3339());
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update model " + name);
  if (db_->Changes() == 0) return NoModel(name);
  return Status::Ok();
}

Result<std::vector<ModelVersionRecord>> SqliteStore::DeleteModel(const std::string& name) {
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  Result<Stmt> select =
      db_->Prepare((std::string(kVersionColumns) + "WHERE m.name = ?1 ORDER BY v.version").c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, name);
  auto removed = ReadRows<ModelVersionRecord>(*select, ReadVersion);
  if (!removed.ok()) return removed.status();
  for (const char* sql :
       {"DELETE FROM model_versions WHERE model_id IN (SELECT id FROM models WHERE name = ?1)",
        "DELETE FROM models WHERE name = ?1"}) {
    Result<Stmt> del = db_->Prepare(sql);
    if (!del.ok()) return del.status();
    del->Bind(1, name);
    if (Status s = del->Run(); !s.ok()) return WithContext(s, "delete model " + name);
  }
  if (db_->Changes() == 0) return NoModel(name);
  if (Status s = tx.Commit(); !s.ok()) return s;
  return removed;
}

Result<ModelVersionRecord> SqliteStore::AddModelVersion(const ModelVersionRecord& v) {
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  auto model = SelectModel(*db_, v.model);
  if (!model.ok()) return model.status();
  Result<Stmt> checkpoint = db_->Prepare("SELECT 1 FROM checkpoints WHERE uuid = ?1");
  if (!checkpoint.ok()) return checkpoint.status();
  checkpoint->Bind(1, v.checkpoint_uuid);
  Result<bool> found = checkpoint->Step();
  if (!found.ok()) return found.status();
  if (!*found) return InvalidArgument("checkpoint " + v.checkpoint_uuid + " is not registered");
  (void)checkpoint->Step();
  ModelVersionRecord stored = v;
  stored.version = model->last_version + 1;
  stored.created_at = stored.updated_at = NowRfc3339();
  Result<Stmt> bump = db_->Prepare("UPDATE models SET last_version = ?2 WHERE id = ?1");
  if (!bump.ok()) return bump.status();
  bump->Bind(1, model->id).Bind(2, stored.version);
  if (Status s = bump->Run(); !s.ok()) return WithContext(s, "add a version to model " + v.model);
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO model_versions (model_id, version, checkpoint_uuid, name, notes, metadata_json, "
      "labels_json, "
      "created_by, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, model->id)
      .Bind(2, stored.version)
      .Bind(3, stored.checkpoint_uuid)
      .Bind(4, stored.name)
      .Bind(5, stored.notes)
      .Bind(6, stored.metadata_json)
      .Bind(7, LabelsJson(stored.labels))
      .Bind(8, stored.created_by)
      .Bind(9, stored.created_at);
  if (Status s = insert->Run(); !s.ok()) return WithContext(s, "add a version to model " + v.model);
  if (Status s = tx.Commit(); !s.ok()) return s;
  return stored;
}

Result<ModelVersionRecord> SqliteStore::GetModelVersion(const std::string& model, int64_t version) {
  std::lock_guard lock(mu_);
  if (auto m = SelectModel(*db_, model); !m.ok()) return m.status();
  Result<Stmt> select =
      db_->Prepare((std::string(kVersionColumns) + "WHERE m.name = ?1 AND v.version = ?2").c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, model).Bind(2, version);
  auto rows = ReadRows<ModelVersionRecord>(*select, ReadVersion);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return NoVersion(model, version);
  return rows->front();
}

Result<std::vector<ModelVersionRecord>> SqliteStore::ListModelVersions(const std::string& model) {
  std::lock_guard lock(mu_);
  if (auto m = SelectModel(*db_, model); !m.ok()) return m.status();
  Result<Stmt> select =
      db_->Prepare((std::string(kVersionColumns) + "WHERE m.name = ?1 ORDER BY v.version").c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, model);
  return ReadRows<ModelVersionRecord>(*select, ReadVersion);
}

Status SqliteStore::UpdateModelVersion(const std::string& model, int64_t version,
                                       const ModelVersionUpdate& u) {
  std::lock_guard lock(mu_);
  if (auto m = SelectModel(*db_, model); !m.ok()) return m.status();
  Result<Stmt> update = db_->Prepare(
      "UPDATE model_versions SET name = CASE WHEN ?3 THEN ?4 ELSE name END, "
      "notes = CASE WHEN ?5 THEN ?6 ELSE notes END, "
      "metadata_json = CASE WHEN ?7 THEN ?8 ELSE metadata_json END, "
      "labels_json = CASE WHEN ?9 THEN ?10 ELSE labels_json END, updated_at = ?11 "
      "WHERE model_id = (SELECT id FROM models WHERE name = ?1) AND version = ?2");
  if (!update.ok()) return update.status();
  update->Bind(1, model)
      .Bind(2, version)
      .Bind(3, int64_t{u.name.has_value()})
      .Bind(4, u.name.value_or(""))
      .Bind(5, int64_t{u.notes.has_value()})
      .Bind(6, u.notes.value_or(""))
      .Bind(7, int64_t{u.metadata_json.has_value()})
      .Bind(8, u.metadata_json.value_or("{}"))
      .Bind(9, int64_t{u.labels.has_value()})
      .Bind(10, u.labels ? LabelsJson(*u.labels) : std::string("[]"))
      .Bind(11, NowRfc3339());
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update model " + model);
  if (db_->Changes() == 0) return NoVersion(model, version);
  return Status::Ok();
}

Status SqliteStore::DeleteModelVersion(const std::string& model, int64_t version) {
  std::lock_guard lock(mu_);
  if (auto m = SelectModel(*db_, model); !m.ok()) return m.status();
  Result<Stmt> del = db_->Prepare(
      "DELETE FROM model_versions WHERE model_id = (SELECT id FROM models WHERE name = ?1) AND version = ?2");
  if (!del.ok()) return del.status();
  del->Bind(1, model).Bind(2, version);
  if (Status s = del->Run(); !s.ok()) return WithContext(s, "delete a version of model " + model);
  if (db_->Changes() == 0) return NoVersion(model, version);
  return Status::Ok();
}

Result<std::vector<ModelVersionRecord>> SqliteStore::ListCheckpointModelVersions(const std::string& uuid) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      (std::string(kVersionColumns) + "WHERE v.checkpoint_uuid = ?1 ORDER BY m.name, v.version").c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, uuid);
  return ReadRows<ModelVersionRecord>(*select, ReadVersion);
}

Result<std::vector<ModelVersionRecord>> SqliteStore::ListExperimentModelVersions(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select =
      db_->Prepare((std::string(kVersionColumns) +
                    "WHERE v.checkpoint_uuid IN (SELECT uuid FROM checkpoints WHERE trial_id IN "
                    "(SELECT id FROM trials WHERE experiment_id = ?1)) ORDER BY m.name, v.version")
                       .c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, experiment_id);
  return ReadRows<ModelVersionRecord>(*select, ReadVersion);
}

Result<std::vector<std::string>> SqliteStore::ListModelVersionCheckpoints() {
  std::lock_guard lock(mu_);
  Result<Stmt> select =
      db_->Prepare("SELECT DISTINCT checkpoint_uuid FROM model_versions ORDER BY checkpoint_uuid");
  if (!select.ok()) return select.status();
  return ReadRows<std::string>(*select, [](const Stmt& s) { return s.Text(0); });
}

}  // namespace ring
