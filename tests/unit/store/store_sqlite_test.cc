// SqliteStore specifics: the migrator (versions, rollback, refusal of newer
// databases), the embedded migrations, the schema's constraints, and that data
// survives closing and reopening the file.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "master/store/migration.h"
#include "master/store/sqlite_store.h"

namespace ring {
namespace {

// A private directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ring_store_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A second, raw connection for looking at what the store wrote.
class RawDb {
 public:
  explicit RawDb(const std::string& path) { EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK); }
  ~RawDb() { sqlite3_close(db_); }
  // The first column of the first row as text ("" for none / NULL).
  std::string Query(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db_);
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return out;
  }
  int Exec(const std::string& sql) { return sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr); }
  bool HasTable(const std::string& name) {
    return Query("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '" + name + "'") == "1";
  }

 private:
  sqlite3* db_ = nullptr;
};

const Migration kCreateA{1, "create_a", "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);"};
const Migration kCreateB{2, "create_b", "CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (2);"};
const Migration kBrokenB{2, "create_b", "CREATE TABLE b (y INTEGER); INSERT INTO missing VALUES (2);"};

TEST(StoreMigratorTest, BuiltinMigrationsAreEmbeddedInOrder) {
  std::vector<Migration> builtin = BuiltinMigrations();
  ASSERT_FALSE(builtin.empty());
  EXPECT_EQ(builtin[0].version, 1);
  EXPECT_EQ(builtin[0].name, "initial");
  EXPECT_NE(builtin[0].sql.find("CREATE TABLE experiments"), std::string::npos);
  for (size_t i = 1; i < builtin.size(); ++i) EXPECT_GT(builtin[i].version, builtin[i - 1].version);
}

TEST(StoreMigratorTest, NewDatabaseGetsEverySchemaTableAndVersion) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.File("ring.db"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const int latest = BuiltinMigrations().back().version;
  EXPECT_EQ((*store)->schema_version(), latest);
  RawDb raw(dir.File("ring.db"));
  for (const char* table : {"experiments", "tasks", "trials", "allocations", "metrics", "logs", "agents",
                            "checkpoints", "schema_migrations"}) {
    EXPECT_TRUE(raw.HasTable(table)) << table;
  }
  EXPECT_EQ(
      raw.Query("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'checkpoints_by_trial'"),
      "1");
  EXPECT_EQ(raw.Query("SELECT name FROM schema_migrations WHERE version = 2"), "checkpoints");
  EXPECT_EQ(raw.Query("SELECT MAX(version) FROM schema_migrations"), std::to_string(latest));
  EXPECT_EQ(raw.Query("SELECT name FROM schema_migrations WHERE version = 1"), "initial");
  EXPECT_EQ(raw.Query("PRAGMA journal_mode"), "wal");
}

TEST(StoreMigratorTest, AppliesOnceAndReopeningDoesNotReapply) {
  TempDir dir;
  const std::string path = dir.File("m.db");
  {
    auto store = SqliteStore::Open(path, {kCreateA});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ((*store)->schema_version(), 1);
  }
  std::string applied_at = RawDb(path).Query("SELECT applied_at FROM schema_migrations WHERE version = 1");
  EXPECT_FALSE(applied_at.empty());
  {
    auto store = SqliteStore::Open(path, {kCreateA});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ((*store)->schema_version(), 1);
  }
  RawDb raw(path);
  EXPECT_EQ(raw.Query("SELECT COUNT(*) FROM a"), "1");  // the insert ran once
  EXPECT_EQ(raw.Query("SELECT COUNT(*) FROM schema_migrations"), "1");
  EXPECT_EQ(raw.Query("SELECT applied_at FROM schema_migrations WHERE version = 1"), applied_at);
}

TEST(StoreMigratorTest, AppliesOnlyTheMissingMigrations) {
  TempDir dir;
  const std::string path = dir.File("m.db");
  ASSERT_TRUE(SqliteStore::Open(path, {kCreateA}).ok());
  auto store = SqliteStore::Open(path, {kCreateA, kCreateB});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), 2);
  RawDb raw(path);
  EXPECT_TRUE(raw.HasTable("b"));
  EXPECT_EQ(raw.Query("SELECT GROUP_CONCAT(x) FROM (SELECT x FROM a ORDER BY x)"), "1,2");
  EXPECT_EQ(raw.Query("SELECT GROUP_CONCAT(name) FROM (SELECT name FROM schema_migrations ORDER BY version)"),
            "create_a,create_b");
}

// Version 7 makes every trial a task and every allocation an attempt of
// one, keeping every row of a database written before it.
TEST(StoreMigratorTest, TasksMigrationKeepsEveryTrialAndAllocation) {
  TempDir dir;
  const std::string path = dir.File("v6.db");
  std::vector<Migration> before = BuiltinMigrations();
  ASSERT_EQ(before.at(6).version, 7);
  before.resize(6);
  ASSERT_TRUE(SqliteStore::Open(path, before).ok());
  {
    RawDb raw(path);
    ASSERT_EQ(
        raw.Exec("INSERT INTO experiments (id, owner, config_yaml, state, created_at, model_definition) "
                 "VALUES (1, 'ann', 'name: x', 'ACTIVE', '2026-01-01T00:00:00.000Z', x'00');"
                 "INSERT INTO trials (id, experiment_id, state, created_at, ended_at) VALUES "
                 "(4, 1, 'COMPLETED', '2026-01-01T00:00:01.000Z', '2026-01-01T00:01:00.000Z'), "
                 "(9, 1, 'ACTIVE', '2026-01-01T00:00:02.000Z', NULL);"
                 "INSERT INTO allocations (id, trial_id, state, created_at, end_cause, exit_reason) VALUES "
                 "('9.1', 9, 'RUNNING', '2026-01-01T00:00:05.000Z', NULL, NULL), "
                 "('4.0', 4, 'TERMINATED', '2026-01-01T00:00:03.000Z', 'COMPLETED', 'exited with code 0'), "
                 "('9.0', 9, 'TERMINATED', '2026-01-01T00:00:04.000Z', 'AGENT_LOST', 'agent lost');"),
        SQLITE_OK);
  }
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), BuiltinMigrations().back().version);
  for (int64_t trial : {4, 9}) {
    auto t = (*store)->GetTrial(trial);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->task_id, trial);
    auto task = (*store)->GetTask(trial);
    ASSERT_TRUE(task.ok());
    EXPECT_EQ(task->kind, TaskKind::kTrial);
    EXPECT_EQ(task->owner, "ann");
    EXPECT_EQ(task->ended_at, t->ended_at);
  }
  auto nine = (*store)->ListAllocations(9);
  ASSERT_TRUE(nine.ok());
  ASSERT_EQ(nine->size(), 2u);
  EXPECT_EQ(nine->at(0).id, "9.1");  // creation (rowid) order is kept
  EXPECT_EQ(nine->at(0).task_id, 9);
  EXPECT_EQ(nine->at(1).end_cause, EndCause::kAgentLost);
  auto four = (*store)->GetAllocation("4.0");
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(four->trial_id, 4);
  EXPECT_EQ(four->exit_reason, "exited with code 0");
  auto live = (*store)->ListLiveAllocations();
  ASSERT_EQ(live->size(), 1u);
  // New trials get tasks numbered after the migrated ones.
  TrialRecord next;
  next.experiment_id = 1;
  auto id = (*store)->CreateTrial(next);
  ASSERT_TRUE(id.ok());
  EXPECT_GT((*store)->GetTrial(*id)->task_id, 9);
}

TEST(StoreMigratorTest, FailingMigrationRollsBackToPreviousVersion) {
  TempDir dir;
  const std::string path = dir.File("m.db");
  auto failed = SqliteStore::Open(path, {kCreateA, kBrokenB});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("2_create_b"), std::string::npos) << failed.status().ToString();
  {
    RawDb raw(path);
    EXPECT_EQ(raw.Query("SELECT MAX(version) FROM schema_migrations"), "1");
    EXPECT_TRUE(raw.HasTable("a"));
    EXPECT_FALSE(raw.HasTable("b"));  // no partial migration
  }
  // A fixed binary then migrates the same file.
  auto fixed = SqliteStore::Open(path, {kCreateA, kCreateB});
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_EQ((*fixed)->schema_version(), 2);
}

TEST(StoreMigratorTest, RefusesDatabaseFromNewerBinary) {
  TempDir dir;
  const std::string path = dir.File("m.db");
  ASSERT_TRUE(SqliteStore::Open(path, {kCreateA, kCreateB}).ok());
  auto older = SqliteStore::Open(path, {kCreateA});
  ASSERT_FALSE(older.ok());
  EXPECT_EQ(older.status().code(), ErrorCode::kConflict);
  EXPECT_NE(older.status().message().find("newer"), std::string::npos) << older.status().ToString();
  EXPECT_EQ(RawDb(path).Query("SELECT MAX(version) FROM schema_migrations"), "2");  // left as is
}

TEST(StoreMigratorTest, RejectsMigrationsOutOfOrder) {
  TempDir dir;
  Migration second = kCreateB;
  second.version = 1;
  auto store = SqliteStore::Open(dir.File("m.db"), {kCreateA, second});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), ErrorCode::kInternal);
}

TEST(StoreSchemaTest, ConstraintsRejectBadRowsWrittenDirectly) {
  TempDir dir;
  const std::string path = dir.File("ring.db");
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  RawDb raw(path);
  ASSERT_EQ(raw.Exec("PRAGMA foreign_keys = ON"), SQLITE_OK);
  EXPECT_EQ(raw.Exec("INSERT INTO experiments (config_yaml, state, created_at, model_definition) "
                     "VALUES ('', 'BOGUS', '', x'00')"),
            SQLITE_CONSTRAINT);
  EXPECT_EQ(raw.Exec("INSERT INTO trials (experiment_id, state, created_at) VALUES (99, 'ACTIVE', '')"),
            SQLITE_CONSTRAINT);
  EXPECT_EQ(
      raw.Exec("INSERT INTO agents (id, state, registered_at, last_seen_at) VALUES ('a', 'gone', '', '')"),
      SQLITE_CONSTRAINT);

  ASSERT_EQ(raw.Exec("INSERT INTO experiments (config_yaml, state, created_at, model_definition) "
                     "VALUES ('', 'ACTIVE', '', x'00')"),
            SQLITE_OK);
  ASSERT_EQ(raw.Exec("INSERT INTO trials (experiment_id, state, created_at) VALUES (1, 'ACTIVE', '')"),
            SQLITE_OK);
  const std::string ckpt =
      "INSERT INTO checkpoints (uuid, trial_id, allocation_id, batches, state, storage_json, "
      "resources_json, metadata_json, created_at) VALUES ";
  EXPECT_EQ(raw.Exec(ckpt + "('u', 1, '1.0', 5, 'ACTIVE', '{}', '[]', '{}', '')"), SQLITE_OK);
  EXPECT_EQ(raw.Exec(ckpt + "('u', 1, '1.0', 5, 'ACTIVE', '{}', '[]', '{}', '')"), SQLITE_CONSTRAINT);  // dup
  EXPECT_EQ(raw.Exec(ckpt + "('s', 1, '1.0', 5, 'GONE', '{}', '[]', '{}', '')"), SQLITE_CONSTRAINT);
  EXPECT_EQ(raw.Exec(ckpt + "('b', 1, '1.0', -1, 'ACTIVE', '{}', '[]', '{}', '')"), SQLITE_CONSTRAINT);
  EXPECT_EQ(raw.Exec(ckpt + "('', 1, '1.0', 5, 'ACTIVE', '{}', '[]', '{}', '')"), SQLITE_CONSTRAINT);
  EXPECT_EQ(raw.Exec(ckpt + "('t', 42, '1.0', 5, 'ACTIVE', '{}', '[]', '{}', '')"), SQLITE_CONSTRAINT);
  EXPECT_EQ(raw.Exec(ckpt + "('n', 1, '1.0', 5, 'ACTIVE', NULL, '[]', '{}', '')"), SQLITE_CONSTRAINT);
}

TEST(StoreOpenTest, UnopenablePathIsAnError) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.File("no/such/dir/ring.db"));
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("no/such/dir"), std::string::npos) << store.status().ToString();
}

TEST(StoreOpenTest, FileThatIsNotADatabaseIsAnError) {
  TempDir dir;
  const std::string path = dir.File("junk.db");
  {
    std::ofstream junk(path);
    junk << std::string(8192, 'x');
  }
  auto store = SqliteStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("junk.db"), std::string::npos) << store.status().ToString();
}

TEST(StoreOpenTest, InMemoryDatabaseWorksForTests) {
  auto store = SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ExperimentRecord e;
  e.config_yaml = "name: m\n";
  auto id = (*store)->CreateExperiment(e, "m");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ((*store)->GetExperiment(*id)->config_yaml, "name: m\n");
}

TEST(SqliteStoreDurabilityTest, DataSurvivesReopen) {
  TempDir dir;
  const std::string path = dir.File("ring.db");
  const std::string model("tar\0gz", 6);
  int64_t exp = 0;
  int64_t trial = 0;
  int64_t last_log_id = 0;
  {
    auto opened = SqliteStore::Open(path);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    Store& store = **opened;
    ExperimentRecord e;
    e.name = "durable";
    e.config_yaml = "name: durable\n";
    exp = *store.CreateExperiment(e, model);
    TrialRecord t;
    t.experiment_id = exp;
    t.hparams_json = R"({"lr":0.01})";
    trial = *store.CreateTrial(t);
    AllocationRecord a;
    a.id = std::to_string(trial) + ".0";
    a.task_id = store.GetTrial(trial)->task_id;
    a.trial_id = trial;
    a.state = AllocationState::kRunning;
    ASSERT_TRUE(store.CreateAllocation(a).ok());
    MetricReport m;
    m.trial_id = trial;
    m.kind = MetricKind::kValidation;
    m.batches = 100;
    m.metrics_json = R"({"acc":0.9})";
    ASSERT_TRUE(store.AddMetrics({m}).ok());
    LogRecord l;
    l.trial_id = trial;
    l.line = "hello";
    ASSERT_TRUE(store.AddLogs({l, l}).ok());
    last_log_id = store.GetLogs(trial, -1, 0, 10)->back().id;
    AgentRecord agent;
    agent.id = "host-1";
    agent.state = AgentState::kConnected;
    ASSERT_TRUE(store.UpsertAgent(agent).ok());
    CheckpointRecord c;
    c.uuid = "ckpt-1";
    c.trial_id = trial;
    c.allocation_id = a.id;
    c.batches = 100;
    c.metadata_json = R"({"step":100})";
    ASSERT_TRUE(store.AddCheckpoint(c).ok());
    ASSERT_TRUE(store.SetCheckpointState("ckpt-1", CheckpointState::kDeleted).ok());
  }  // closes the connection

  auto reopened = SqliteStore::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  Store& store = **reopened;
  auto e = store.GetExperiment(exp);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->name, "durable");
  EXPECT_EQ(*store.GetModelDefinition(exp), model);
  EXPECT_EQ(store.GetTrial(trial)->hparams_json, R"({"lr":0.01})");
  auto live = store.ListLiveAllocations();
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].state, AllocationState::kRunning);
  ASSERT_EQ(store.GetMetrics(trial, MetricKind::kValidation)->size(), 1u);
  EXPECT_EQ(store.GetLogs(trial, -1, 0, 10)->size(), 2u);
  EXPECT_EQ(store.ListAgents()->size(), 1u);
  auto ckpt = store.GetCheckpoint("ckpt-1");
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->trial_id, trial);
  EXPECT_EQ(ckpt->batches, 100);
  EXPECT_EQ(ckpt->state, CheckpointState::kDeleted);
  EXPECT_EQ(ckpt->metadata_json, R"({"step":100})");

  // Ids keep increasing across restarts.
  LogRecord l;
  l.trial_id = trial;
  l.line = "after restart";
  ASSERT_TRUE(store.AddLogs({l}).ok());
  auto newer = store.GetLogs(trial, -1, last_log_id, 10);
  ASSERT_TRUE(newer.ok());
  ASSERT_EQ(newer->size(), 1u);
  EXPECT_GT((*newer)[0].id, last_log_id);
  ExperimentRecord e2;
  e2.config_yaml = "name: second\n";
  EXPECT_GT(*store.CreateExperiment(e2, ""), exp);
}

}  // namespace
}  // namespace ring
