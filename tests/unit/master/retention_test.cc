// Retention: the store calls it uses behave the same in both stores, a pass
// thins old training metrics and deletes expired logs as configured, and a
// SQLite database gives the space back.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "master/maintenance/retention.h"
#include "master/queries/metric_series.h"
#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

using std::chrono::hours;

using testing::MemoryStoreHolder;
using testing::ScratchDir;
using testing::SqliteStoreHolder;

std::string Config(const std::string& extra = "") {
  return "name: r\nentrypoint: x\nsearcher:\n  name: single\n  metric: loss\n  max_length:\n    batches: "
         "1\n" +
         extra;
}

template <typename Holder>
class RetentionTest : public ::testing::Test {
 protected:
  Store& store() { return *holder_.store; }

  int64_t AddExperiment(const std::string& config) {
    ExperimentRecord e;
    e.name = "r";
    e.config_yaml = config;
    auto id = store().CreateExperiment(e, "model");
    EXPECT_TRUE(id.ok()) << id.status().message();
    return *id;
  }

  // A trial, ended (terminal) or still running.
  int64_t AddTrial(int64_t experiment, bool ended) {
    TrialRecord t;
    t.experiment_id = experiment;
    auto id = store().CreateTrial(t);
    EXPECT_TRUE(id.ok()) << id.status().message();
    if (ended) {
      auto got = store().GetTrial(*id);
      got->state = RunState::kCompleted;
      EXPECT_TRUE(store().UpdateTrial(*got).ok());
    }
    return *id;
  }

  // n training reports of loss (a noisy curve with one spike) and lr.
  void AddTraining(int64_t trial, int n) {
    std::vector<MetricReport> reports;
    for (int i = 0; i < n; ++i) {
      const double loss = (i == n / 2 ? 50.0 : 1.0 / (1 + i)) + 0.01 * std::sin(i);
      reports.push_back(
          {trial, MetricKind::kTraining, i + 1,
           "{\"loss\":" + std::to_string(loss) + ",\"lr\":" + std::to_string(0.1 / (1 + i / 100)) + "}", "a",
           ""});
    }
    reports.push_back({trial, MetricKind::kTraining, n + 1, "{\"note\":\"text only\"}", "a", ""});
    ASSERT_TRUE(store().AddMetrics(reports).ok());
  }

  void AddLogs(int64_t trial, int n) {
    std::vector<LogRecord> lines;
    for (int i = 0; i < n; ++i) lines.push_back({0, trial, "a", 0, "stdout", std::string(200, 'x'), i});
    ASSERT_TRUE(store().AddLogs(lines).ok());
  }

  int64_t LogCount(int64_t trial) {
    auto logs = store().GetLogs(trial, -1, 0, 100000);
    return logs.ok() ? static_cast<int64_t>(logs->size()) : -1;
  }

  Holder holder_;
};

using Stores = testing::BothStores;
TYPED_TEST_SUITE(RetentionTest, Stores);

TYPED_TEST(RetentionTest, StoreCountsAndDeletesMetricsAndLogs) {
  const int64_t trial = this->AddTrial(this->AddExperiment(Config()), false);
  this->AddTraining(trial, 10);
  ASSERT_TRUE(this->store().AddMetrics({{trial, MetricKind::kValidation, 5, "{\"loss\":1}", "a", ""}}).ok());
  EXPECT_EQ(*this->store().CountMetrics(trial, MetricKind::kTraining), 11);
  EXPECT_EQ(*this->store().CountMetrics(trial, MetricKind::kValidation), 1);
  EXPECT_EQ(*this->store().DeleteMetrics(trial, MetricKind::kTraining, {2, 3, 99}), 2);
  EXPECT_EQ(*this->store().CountMetrics(trial, MetricKind::kTraining), 9);
  EXPECT_EQ(*this->store().CountMetrics(trial, MetricKind::kValidation), 1);

  this->AddLogs(trial, 5);
  EXPECT_EQ(*this->store().DeleteLogs(trial), 5);
  EXPECT_EQ(*this->store().DeleteLogs(trial), 0);
  EXPECT_EQ(this->LogCount(trial), 0);
  // Ids keep increasing after a deletion: followers never see an old offset again.
  this->AddLogs(trial, 1);
  auto logs = this->store().GetLogs(trial, -1, 0, 10);
  ASSERT_EQ(logs->size(), 1u);
  EXPECT_GT(logs->front().id, 5);
  EXPECT_TRUE(this->store().Compact().ok());
}

TYPED_TEST(RetentionTest, ThinsOnlyOldTrainingMetricsAndKeepsTheCurvesShape) {
  const int64_t trial = this->AddTrial(this->AddExperiment(Config()), true);
  this->AddTraining(trial, 3000);
  ASSERT_TRUE(
      this->store().AddMetrics({{trial, MetricKind::kValidation, 100, "{\"loss\":0.5}", "a", ""}}).ok());
  const auto now = std::chrono::system_clock::now();
  Retention retention(this->store(), {.metrics_full_resolution_days = 30, .metrics_max_points = 100});

  auto early = retention.Run(now + hours(24 * 29));  // not old enough yet
  ASSERT_TRUE(early.ok()) << early.status().message();
  EXPECT_EQ(early->metric_reports_deleted, 0);
  EXPECT_EQ(*this->store().CountMetrics(trial, MetricKind::kTraining), 3001);

  auto before = this->store().GetMetrics(trial, MetricKind::kTraining);
  auto pass = retention.Run(now + hours(24 * 31));
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_EQ(pass->trials, 1);
  EXPECT_EQ(pass->trials_thinned, 1);
  auto after = this->store().GetMetrics(trial, MetricKind::kTraining);
  EXPECT_EQ(pass->metric_reports_deleted, static_cast<int64_t>(before->size() - after->size()));
  // Each metric's 100 points, picked as the chart picks them, are kept; the
  // reports are the union of those picks (and the one without numbers).
  EXPECT_LE(after->size(), 2u * 100 + 1);
  for (const char* metric : {"loss", "lr"}) {
    const auto kept = ExtractSeries(*after, metric, 100000);
    const auto chart = ExtractSeries(*before, metric, 100);
    EXPECT_TRUE(
        std::includes(kept.batches.begin(), kept.batches.end(), chart.batches.begin(), chart.batches.end()))
        << metric << ": every point the chart draws is still there";
  }
  const auto loss = ExtractSeries(*after, "loss", 100000);
  EXPECT_EQ(loss.batches.front(), 1);
  EXPECT_EQ(loss.batches.back(), 3000);
  EXPECT_NEAR(*std::max_element(loss.values.begin(), loss.values.end()), 50.0 + 0.01 * std::sin(1500), 1e-5)
      << "the spike survives";
  EXPECT_EQ(after->back().metrics_json, "{\"note\":\"text only\"}") << "a report without numbers is kept";
  EXPECT_EQ(*this->store().CountMetrics(trial, MetricKind::kValidation), 1)
      << "validation metrics are never thinned";

  auto again = retention.Run(now + hours(24 * 32));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->metric_reports_deleted, 0) << "a second pass changes nothing";
  EXPECT_EQ(*this->store().CountMetrics(trial, MetricKind::kTraining), static_cast<int64_t>(after->size()));
}

TYPED_TEST(RetentionTest, DeletesLogsOfTrialsEndedLongAgoWithPerExperimentOverrides) {
  const int64_t by_master = this->AddExperiment(Config());
  const int64_t keeps = this->AddExperiment(Config("log_retention_days: -1\n"));
  const int64_t short_lived = this->AddExperiment(Config("log_retention_days: 1\n"));
  const int64_t ended = this->AddTrial(by_master, true);
  const int64_t running = this->AddTrial(by_master, false);
  const int64_t kept = this->AddTrial(keeps, true);
  const int64_t quick = this->AddTrial(short_lived, true);
  for (int64_t t : {ended, running, kept, quick}) this->AddLogs(t, 50);
  const auto now = std::chrono::system_clock::now();
  Retention retention(this->store(), {.log_retention_days = 7, .metrics_full_resolution_days = -1});

  auto day2 = retention.Run(now + hours(48));
  ASSERT_TRUE(day2.ok()) << day2.status().message();
  EXPECT_EQ(day2->log_lines_deleted, 50);
  EXPECT_EQ(this->LogCount(quick), 0) << "the experiment's 1 day overrides the master's 7";
  EXPECT_EQ(this->LogCount(ended), 50);

  auto day8 = retention.Run(now + hours(24 * 8));
  ASSERT_TRUE(day8.ok());
  EXPECT_EQ(day8->trials_logs_deleted, 1);
  EXPECT_EQ(this->LogCount(ended), 0);
  EXPECT_EQ(this->LogCount(running), 50) << "a trial that has not ended keeps its logs";
  EXPECT_EQ(this->LogCount(kept), 50) << "log_retention_days: -1 keeps them";
  ASSERT_TRUE(retention.last().has_value());
  EXPECT_EQ(retention.last()->started_at, day8->started_at);
}

// Commands' logs follow the master's log_retention_days from their end.
TYPED_TEST(RetentionTest, DeletesLogsOfCommandsEndedLongAgo) {
  TaskRecord command;
  command.kind = TaskKind::kCommand;
  command.owner = "ada";
  command.spec.argv = {"true"};
  const int64_t ended = *this->store().CreateTask(command, "");
  const int64_t running = *this->store().CreateTask(command, "");
  for (int64_t task : {ended, running}) {
    std::vector<LogRecord> lines;
    for (int i = 0; i < 20; ++i) lines.push_back({0, 0, "a", 0, "stdout", "line", i, task});
    ASSERT_TRUE(this->store().AddTaskLogs(lines).ok());
  }
  ASSERT_TRUE(this->store().EndTask(ended).ok());
  const auto now = std::chrono::system_clock::now();
  Retention retention(this->store(), {.log_retention_days = 7, .metrics_full_resolution_days = -1});
  auto day2 = retention.Run(now + hours(48));
  ASSERT_TRUE(day2.ok());
  EXPECT_EQ(day2->tasks_logs_deleted, 0);
  EXPECT_EQ(this->store().GetTaskLogs(ended, -1, 0, 100)->size(), 20u);
  auto day8 = retention.Run(now + hours(24 * 8));
  ASSERT_TRUE(day8.ok());
  EXPECT_EQ(day8->tasks_logs_deleted, 1);
  EXPECT_EQ(day8->log_lines_deleted, 20);
  EXPECT_TRUE(this->store().GetTaskLogs(ended, -1, 0, 100)->empty());
  EXPECT_EQ(this->store().GetTaskLogs(running, -1, 0, 100)->size(), 20u)
      << "a command that has not ended keeps them";
}

int64_t PragmaInt(const std::string& path, const char* pragma) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  int64_t value = -1;
  if (sqlite3_prepare_v2(db, pragma, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
    value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
  return value;
}

TEST(SqliteRetentionTest, APassGivesTheSpaceOfDeletedLogsBackToTheFileSystem) {
  ScratchDir dir;
  const std::string path = dir.path + "/ring.db";
  auto store = std::move(SqliteStore::Open(path)).value();
  EXPECT_EQ(PragmaInt(path, "PRAGMA auto_vacuum"), 2) << "a new database uses incremental vacuum";
  ExperimentRecord e;
  e.config_yaml = Config("log_retention_days: 0\n");
  const int64_t exp = *store->CreateExperiment(e, "model");
  TrialRecord t;
  t.experiment_id = exp;
  t.state = RunState::kCompleted;
  const int64_t trial = *store->CreateTrial(t);
  for (int batch = 0; batch < 20; ++batch) {
    std::vector<LogRecord> lines;
    for (int i = 0; i < 1000; ++i) lines.push_back({0, trial, "a", 0, "stdout", std::string(400, 'y'), i});
    ASSERT_TRUE(store->AddLogs(lines).ok());
  }
  ASSERT_TRUE(store->Compact().ok());  // moves the log into the file
  const auto full = std::filesystem::file_size(path);
  ASSERT_GT(full, 8u << 20);

  Retention retention(*store, {.log_retention_days = 30, .metrics_full_resolution_days = -1});
  auto pass = retention.Run(std::chrono::system_clock::now() + hours(1));
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_EQ(pass->log_lines_deleted, 20000);
  EXPECT_LT(std::filesystem::file_size(path), full / 10) << "the freed pages went back";
  EXPECT_EQ(std::filesystem::file_size(path + "-wal"), 0u) << "the write-ahead log was truncated";
  EXPECT_EQ(PragmaInt(path, "PRAGMA freelist_count"), 0);
}

TEST(SqliteRetentionTest, ADatabaseMadeWithoutIncrementalVacuumIsConvertedOnOpen) {
  ScratchDir dir;
  const std::string path = dir.path + "/old.db";
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE keepsake (x TEXT); INSERT INTO keepsake VALUES ('kept');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  ASSERT_EQ(PragmaInt(path, "PRAGMA auto_vacuum"), 0);
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(PragmaInt(path, "PRAGMA auto_vacuum"), 2);
  EXPECT_EQ(PragmaInt(path, "SELECT count(*) FROM keepsake"), 1) << "the data survives the conversion";
}

}  // namespace
}  // namespace ring
