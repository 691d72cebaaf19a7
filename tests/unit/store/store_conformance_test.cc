// One behaviour suite for every Store implementation (SqliteStore on a temp
// file, MemoryStore), so the fake cannot drift from the real store.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

using ::testing::ElementsAre;

class SqliteFactory {
 public:
  SqliteFactory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ring_store_XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
  }
  ~SqliteFactory() { std::filesystem::remove_all(dir_); }
  std::unique_ptr<Store> Make() {
    auto store = SqliteStore::Open(dir_ + "/ring.db");
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

 private:
  std::string dir_;
};

class MemoryFactory {
 public:
  std::unique_ptr<Store> Make() { return std::make_unique<MemoryStore>(); }
};

template <typename Factory>
class StoreConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(store_, nullptr); }

  int64_t NewExperiment(const std::string& name = "exp") { return testing::NewExperiment(*store_, name); }
  int64_t NewTrial(int64_t experiment_id) { return testing::NewTrial(*store_, experiment_id); }

  Factory factory_;
  std::unique_ptr<Store> store_ = factory_.Make();
};

using Implementations = ::testing::Types<SqliteFactory, MemoryFactory>;
class ImplementationNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return std::is_same_v<T, SqliteFactory> ? "Sqlite" : "Memory";
  }
};
TYPED_TEST_SUITE(StoreConformanceTest, Implementations, ImplementationNames);

using testing::LooksLikeRfc3339;
TYPED_TEST(StoreConformanceTest, CreatesAndGetsExperiment) {
  ExperimentRecord e;
  e.name = "mnist";
  e.owner = "alice";
  e.config_yaml = "name: mnist\nsearcher:\n  name: single\n";
  e.state = RunState::kPaused;
  e.progress = 0.25;
  auto id = this->store_->CreateExperiment(e, "tar");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_GT(*id, 0);

  auto got = this->store_->GetExperiment(*id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->id, *id);
  EXPECT_EQ(got->name, "mnist");
  EXPECT_EQ(got->owner, "alice");
  EXPECT_EQ(got->config_yaml, e.config_yaml);
  EXPECT_EQ(got->state, RunState::kPaused);
  EXPECT_FALSE(got->archived);
  EXPECT_DOUBLE_EQ(got->progress, 0.25);
  EXPECT_FALSE(got->best_trial_id.has_value());
  EXPECT_FALSE(got->best_validation.has_value());
  EXPECT_TRUE(LooksLikeRfc3339(got->created_at)) << got->created_at;
  EXPECT_EQ(got->ended_at, "");

  auto second = this->store_->CreateExperiment(e, "tar");
  ASSERT_TRUE(second.ok());
  EXPECT_GT(*second, *id);
}

TYPED_TEST(StoreConformanceTest, MissingRowsAreNotFound) {
  EXPECT_EQ(this->store_->GetExperiment(42).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(this->store_->GetModelDefinition(42).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(this->store_->GetTrial(42).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(this->store_->GetAllocation("42.0").status().code(), ErrorCode::kNotFound);
  ExperimentRecord e;
  e.id = 42;
  EXPECT_EQ(this->store_->UpdateExperiment(e).code(), ErrorCode::kNotFound);
  TrialRecord t;
  t.id = 42;
  EXPECT_EQ(this->store_->UpdateTrial(t).code(), ErrorCode::kNotFound);
  AllocationRecord a;
  a.id = "42.0";
  EXPECT_EQ(this->store_->UpdateAllocation(a).code(), ErrorCode::kNotFound);
  // Lists of unknown parents are empty, not errors.
  auto trials = this->store_->ListTrials(42);
  ASSERT_TRUE(trials.ok());
  EXPECT_TRUE(trials->empty());
  auto allocations = this->store_->ListAllocations(42);
  ASSERT_TRUE(allocations.ok());
  EXPECT_TRUE(allocations->empty());
}

TYPED_TEST(StoreConformanceTest, ListsExperimentsInPagesWithTotal) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(this->NewExperiment("e" + std::to_string(i)));

  auto first = this->store_->ListExperiments(2, 0);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->total, 5);
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[0].id, ids[0]);
  EXPECT_EQ(first->items[1].id, ids[1]);
  EXPECT_EQ(first->items[1].name, "e1");

  auto last = this->store_->ListExperiments(2, 4);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->total, 5);
  ASSERT_EQ(last->items.size(), 1u);
  EXPECT_EQ(last->items[0].id, ids[4]);

  auto beyond = this->store_->ListExperiments(10, 10);
  ASSERT_TRUE(beyond.ok());
  EXPECT_EQ(beyond->total, 5);
  EXPECT_TRUE(beyond->items.empty());

  auto count_only = this->store_->ListExperiments(0, 0);
  ASSERT_TRUE(count_only.ok());
  EXPECT_EQ(count_only->total, 5);
  EXPECT_TRUE(count_only->items.empty());

  EXPECT_EQ(this->store_->ListExperiments(-1, 0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store_->ListExperiments(1, -1).status().code(), ErrorCode::kInvalidArgument);
}

TYPED_TEST(StoreConformanceTest, UpdateExperimentWritesMutableFieldsOnly) {
  int64_t id = this->NewExperiment("keep");
  int64_t trial = this->NewTrial(id);
  auto e = this->store_->GetExperiment(id);
  ASSERT_TRUE(e.ok());
  ExperimentRecord changed = *e;
  changed.name = "ignored";
  changed.config_yaml = "ignored";
  changed.state = RunState::kPaused;
  changed.archived = true;
  changed.progress = 0.5;
  changed.best_trial_id = trial;
  changed.best_validation = 0.125;
  ASSERT_TRUE(this->store_->UpdateExperiment(changed).ok());

  auto got = this->store_->GetExperiment(id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->name, "keep");
  EXPECT_EQ(got->config_yaml, "name: keep\n");
  EXPECT_EQ(got->state, RunState::kPaused);
  EXPECT_TRUE(got->archived);
  EXPECT_DOUBLE_EQ(got->progress, 0.5);
  EXPECT_EQ(got->best_trial_id, trial);
  EXPECT_EQ(got->best_validation, 0.125);
  EXPECT_EQ(got->created_at, e->created_at);
  EXPECT_EQ(got->ended_at, "");

  // Reaching a terminal state stamps ended_at once; later updates keep it.
  changed.state = RunState::kCompleted;
  ASSERT_TRUE(this->store_->UpdateExperiment(changed).ok());
  auto ended = this->store_->GetExperiment(id);
  ASSERT_TRUE(ended.ok());
  EXPECT_TRUE(LooksLikeRfc3339(ended->ended_at)) << ended->ended_at;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  changed.archived = false;
  ASSERT_TRUE(this->store_->UpdateExperiment(changed).ok());
  EXPECT_EQ(this->store_->GetExperiment(id)->ended_at, ended->ended_at);
  // An explicit ended_at wins.
  changed.ended_at = "2026-01-02T03:04:05.006Z";
  ASSERT_TRUE(this->store_->UpdateExperiment(changed).ok());
  EXPECT_EQ(this->store_->GetExperiment(id)->ended_at, "2026-01-02T03:04:05.006Z");
}

TYPED_TEST(StoreConformanceTest, UpdateExperimentRejectsInvalidValues) {
  int64_t id = this->NewExperiment();
  auto e = this->store_->GetExperiment(id);
  ASSERT_TRUE(e.ok());
  ExperimentRecord bad = *e;
  bad.progress = 1.5;
  EXPECT_EQ(this->store_->UpdateExperiment(bad).code(), ErrorCode::kInvalidArgument);
  bad.progress = std::nan("");
  EXPECT_EQ(this->store_->UpdateExperiment(bad).code(), ErrorCode::kInvalidArgument);
  bad = *e;
  bad.best_trial_id = 999;  // no such trial
  EXPECT_EQ(this->store_->UpdateExperiment(bad).code(), ErrorCode::kInvalidArgument);
  bad = *e;
  bad.state = static_cast<RunState>(99);
  EXPECT_EQ(this->store_->UpdateExperiment(bad).code(), ErrorCode::kInvalidArgument);
  auto unchanged = this->store_->GetExperiment(id);
  ASSERT_TRUE(unchanged.ok());
  EXPECT_DOUBLE_EQ(unchanged->progress, 0);
  EXPECT_FALSE(unchanged->best_trial_id.has_value());
  EXPECT_EQ(unchanged->state, RunState::kActive);
}

TYPED_TEST(StoreConformanceTest, NanValidationIsStoredAsAbsent) {
  int64_t id = this->NewExperiment();
  TrialRecord t;
  t.experiment_id = id;
  t.best_validation = std::nan("");
  auto trial = this->store_->CreateTrial(t);
  ASSERT_TRUE(trial.ok());
  EXPECT_FALSE(this->store_->GetTrial(*trial)->best_validation.has_value());
}

TYPED_TEST(StoreConformanceTest, CreatesListsAndUpdatesTrials) {
  int64_t exp = this->NewExperiment("a");
  int64_t other = this->NewExperiment("b");
  TrialRecord t;
  t.experiment_id = exp;
  t.hparams_json = R"({"lr":0.1,"layers":[1,2]})";
  t.seed = 1234;
  auto first = this->store_->CreateTrial(t);
  ASSERT_TRUE(first.ok());
  this->NewTrial(other);
  auto second = this->store_->CreateTrial(t);
  ASSERT_TRUE(second.ok());
  EXPECT_GT(*second, *first);

  auto got = this->store_->GetTrial(*first);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->experiment_id, exp);
  EXPECT_EQ(got->hparams_json, t.hparams_json);
  EXPECT_EQ(got->seed, 1234);
  EXPECT_EQ(got->state, RunState::kActive);
  EXPECT_EQ(got->restarts, 0);
  EXPECT_EQ(got->latest_checkpoint, "");
  EXPECT_TRUE(LooksLikeRfc3339(got->created_at));

  auto listed = this->store_->ListTrials(exp);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].id, *first);
  EXPECT_EQ((*listed)[1].id, *second);

  TrialRecord update = *got;
  update.state = RunState::kError;
  update.restarts = 2;
  update.total_batches = 500;
  update.best_validation = 0.75;
  update.latest_checkpoint = "c0ffee";
  update.hparams_json = "{}";  // not mutable
  ASSERT_TRUE(this->store_->UpdateTrial(update).ok());
  auto updated = this->store_->GetTrial(*first);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->state, RunState::kError);
  EXPECT_EQ(updated->restarts, 2);
  EXPECT_EQ(updated->total_batches, 500);
  EXPECT_EQ(updated->best_validation, 0.75);
  EXPECT_EQ(updated->latest_checkpoint, "c0ffee");
  EXPECT_EQ(updated->hparams_json, t.hparams_json);
  EXPECT_TRUE(LooksLikeRfc3339(updated->ended_at));

  update.restarts = -1;
  EXPECT_EQ(this->store_->UpdateTrial(update).code(), ErrorCode::kInvalidArgument);
}

// An allocation of the trial's task (a trial that does not exist: of a task
// that does not either).
AllocationRecord Allocation(Store& store, const std::string& id, int64_t trial) {
  AllocationRecord a;
  a.id = id;
  auto t = store.GetTrial(trial);
  a.task_id = t.ok() ? t->task_id : trial + 1000;
  a.trial_id = trial;
  a.token_hash = "hash-" + id;
  a.slots = 2;
  a.placements = {{"agent-1", {0}}};
  return a;
}

TYPED_TEST(StoreConformanceTest, CreatesAndListsAllocations) {
  int64_t exp = this->NewExperiment();
  int64_t t1 = this->NewTrial(exp);
  int64_t t2 = this->NewTrial(exp);
  // Creation order, not id text order ("1.10" sorts before "1.2").
  for (const char* id : {"x.0", "x.2", "x.10"}) {
    ASSERT_TRUE(this->store_->CreateAllocation(Allocation(*this->store_, id, t1)).ok()) << id;
  }
  ASSERT_TRUE(this->store_->CreateAllocation(Allocation(*this->store_, "y.0", t2)).ok());

  auto got = this->store_->GetAllocation("x.2");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->trial_id, t1);
  EXPECT_EQ(got->state, AllocationState::kPending);
  EXPECT_EQ(got->token_hash, "hash-x.2");
  EXPECT_EQ(got->slots, 2);
  EXPECT_EQ(got->placements, (std::vector<Placement>{{"agent-1", {0}}}));
  EXPECT_EQ(got->exit_reason, "");
  EXPECT_FALSE(got->exit_code.has_value());
  EXPECT_TRUE(LooksLikeRfc3339(got->created_at));
  EXPECT_EQ(got->ended_at, "");

  auto listed = this->store_->ListAllocations(t1);
  ASSERT_TRUE(listed.ok());
  std::vector<std::string> ids;
  for (const auto& a : *listed) ids.push_back(a.id);
  EXPECT_THAT(ids, ElementsAre("x.0", "x.2", "x.10"));
}

TYPED_TEST(StoreConformanceTest, DuplicateAllocationIsConflict) {
  int64_t trial = this->NewTrial(this->NewExperiment());
  ASSERT_TRUE(this->store_->CreateAllocation(Allocation(*this->store_, "1.0", trial)).ok());
  AllocationRecord again = Allocation(*this->store_, "1.0", trial);
  again.token_hash = "other";
  EXPECT_EQ(this->store_->CreateAllocation(again).code(), ErrorCode::kConflict);
  EXPECT_EQ(this->store_->GetAllocation("1.0")->token_hash, "hash-1.0");
  EXPECT_EQ(this->store_->CreateAllocation(Allocation(*this->store_, "", trial)).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store_->CreateAllocation(Allocation(*this->store_, "9.0", trial + 100)).code(),
            ErrorCode::kInvalidArgument);
}

TYPED_TEST(StoreConformanceTest, UpdatesAllocationsAndListsLiveOnes) {
  int64_t exp = this->NewExperiment();
  int64_t t1 = this->NewTrial(exp);
  int64_t t2 = this->NewTrial(exp);
  for (const auto& [id, trial] :
       std::vector<std::pair<std::string, int64_t>>{{"a.0", t1}, {"b.0", t2}, {"a.1", t1}}) {
    ASSERT_TRUE(this->store_->CreateAllocation(Allocation(*this->store_, id, trial)).ok());
  }
  AllocationRecord a = *this->store_->GetAllocation("a.0");
  a.state = AllocationState::kTerminated;
  a.exit_reason = "process exited";
  a.exit_code = 0;
  ASSERT_TRUE(this->store_->UpdateAllocation(a).ok());
  AllocationRecord b = *this->store_->GetAllocation("b.0");
  b.state = AllocationState::kRunning;
  b.token_hash = "new-hash";
  b.placements = {{"agent-2", {0, 1}}, {"agent-3", {2}}};
  b.processes = 2;  // one per agent
  ASSERT_TRUE(this->store_->UpdateAllocation(b).ok());

  auto ended = this->store_->GetAllocation("a.0");
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(ended->state, AllocationState::kTerminated);
  EXPECT_EQ(ended->exit_reason, "process exited");
  EXPECT_EQ(ended->exit_code, 0);
  EXPECT_TRUE(LooksLikeRfc3339(ended->ended_at));
  auto running = this->store_->GetAllocation("b.0");
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->state, AllocationState::kRunning);
  EXPECT_EQ(running->token_hash, "new-hash");
  EXPECT_EQ(running->placements, (std::vector<Placement>{{"agent-2", {0, 1}}, {"agent-3", {2}}}));
  EXPECT_EQ(running->processes, 2);
  EXPECT_EQ(ended->processes, 0);  // one per slot, as before processes were recorded
  EXPECT_FALSE(running->exit_code.has_value());

  auto live = this->store_->ListLiveAllocations();
  ASSERT_TRUE(live.ok());
  std::vector<std::string> ids;
  for (const auto& x : *live) ids.push_back(x.id);
  EXPECT_THAT(ids, ElementsAre("b.0", "a.1"));
}

MetricReport Metric(int64_t trial, MetricKind kind, int64_t batches, const std::string& json) {
  MetricReport r;
  r.trial_id = trial;
  r.kind = kind;
  r.batches = batches;
  r.metrics_json = json;
  r.allocation_id = std::to_string(trial) + ".0";
  return r;
}

TYPED_TEST(StoreConformanceTest, MetricsAreIdempotent) {
  int64_t trial = this->NewTrial(this->NewExperiment());
  std::vector<MetricReport> batch = {Metric(trial, MetricKind::kTraining, 200, R"({"loss":0.5})"),
                                     Metric(trial, MetricKind::kTraining, 100, R"({"loss":0.9})")};
  auto added = this->store_->AddMetrics(batch);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, 2);
  // The retried report is ignored, even with different values.
  batch[0].metrics_json = R"({"loss":123})";
  added = this->store_->AddMetrics({batch[0]});
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(*added, 0);
  // A mixed batch stores only the new one; a duplicate inside one batch counts once.
  added = this->store_->AddMetrics({batch[1], Metric(trial, MetricKind::kTraining, 300, R"({"loss":0.1})"),
                                    Metric(trial, MetricKind::kTraining, 300, R"({"loss":0.2})"),
                                    Metric(trial, MetricKind::kValidation, 100, R"({"acc":0.8})")});
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(*added, 2);

  auto training = this->store_->GetMetrics(trial, MetricKind::kTraining);
  ASSERT_TRUE(training.ok());
  ASSERT_EQ(training->size(), 3u);
  EXPECT_EQ((*training)[0].batches, 100);
  EXPECT_EQ((*training)[1].batches, 200);
  EXPECT_EQ((*training)[1].metrics_json, R"({"loss":0.5})");
  EXPECT_EQ((*training)[2].batches, 300);
  EXPECT_EQ((*training)[2].metrics_json, R"({"loss":0.1})");
  EXPECT_EQ((*training)[0].trial_id, trial);
  EXPECT_EQ((*training)[0].kind, MetricKind::kTraining);
  EXPECT_EQ((*training)[0].allocation_id, std::to_string(trial) + ".0");
  EXPECT_TRUE(LooksLikeRfc3339((*training)[0].reported_at));

  auto validation = this->store_->GetMetrics(trial, MetricKind::kValidation);
  ASSERT_TRUE(validation.ok());
  ASSERT_EQ(validation->size(), 1u);
  EXPECT_EQ((*validation)[0].metrics_json, R"({"acc":0.8})");
}

TYPED_TEST(StoreConformanceTest, InvalidMetricBatchStoresNothing) {
  int64_t trial = this->NewTrial(this->NewExperiment());
  auto bad_trial = this->store_->AddMetrics(
      {Metric(trial, MetricKind::kTraining, 1, "{}"), Metric(trial + 100, MetricKind::kTraining, 1, "{}")});
  EXPECT_EQ(bad_trial.status().code(), ErrorCode::kInvalidArgument);
  auto bad_batches = this->store_->AddMetrics(
      {Metric(trial, MetricKind::kTraining, 2, "{}"), Metric(trial, MetricKind::kTraining, -2, "{}")});
  EXPECT_EQ(bad_batches.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(this->store_->GetMetrics(trial, MetricKind::kTraining)->empty());
  auto none = this->store_->AddMetrics({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0);
}

LogRecord Line(int64_t trial, int rank, const std::string& text) {
  LogRecord l;
  l.trial_id = trial;
  l.allocation_id = std::to_string(trial) + ".0";
  l.rank = rank;
  l.stream = rank == 0 ? "stdout" : "stderr";
  l.line = text;
  l.ts_ms = 1700000000000 + rank;
  return l;
}

TYPED_TEST(StoreConformanceTest, LogsFilterByRankAfterIdAndLimit) {
  int64_t exp = this->NewExperiment();
  int64_t t1 = this->NewTrial(exp);
  int64_t t2 = this->NewTrial(exp);
  ASSERT_TRUE(this->store_->AddLogs({Line(t1, 0, "a0"), Line(t1, 1, "a1"), Line(t2, 0, "other")}).ok());
  ASSERT_TRUE(this->store_->AddLogs({Line(t1, 0, "b0"), Line(t1, 1, std::string("b1\0bin", 6))}).ok());

  auto all = this->store_->GetLogs(t1, -1, 0, 100);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 4u);
  std::vector<std::string> lines;
  for (size_t i = 0; i < all->size(); ++i) {
    lines.push_back((*all)[i].line);
    if (i > 0) {
      EXPECT_GT((*all)[i].id, (*all)[i - 1].id);
    }
  }
  EXPECT_THAT(lines, ElementsAre("a0", "a1", "b0", std::string("b1\0bin", 6)));
  EXPECT_EQ((*all)[1].rank, 1);
  EXPECT_EQ((*all)[1].stream, "stderr");
  EXPECT_EQ((*all)[1].allocation_id, std::to_string(t1) + ".0");
  EXPECT_EQ((*all)[1].ts_ms, 1700000000001);
  EXPECT_EQ((*all)[1].trial_id, t1);

  auto rank1 = this->store_->GetLogs(t1, 1, 0, 100);
  ASSERT_TRUE(rank1.ok());
  ASSERT_EQ(rank1->size(), 2u);
  EXPECT_EQ((*rank1)[0].line, "a1");

  auto after = this->store_->GetLogs(t1, -1, (*all)[1].id, 100);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 2u);
  EXPECT_EQ((*after)[0].line, "b0");

  auto limited = this->store_->GetLogs(t1, -1, 0, 3);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 3u);
  auto rank0_limited = this->store_->GetLogs(t1, 0, 0, 1);
  ASSERT_TRUE(rank0_limited.ok());
  ASSERT_EQ(rank0_limited->size(), 1u);
  EXPECT_EQ((*rank0_limited)[0].line, "a0");
  EXPECT_TRUE(this->store_->GetLogs(t1, -1, (*all)[3].id, 100)->empty());
  EXPECT_TRUE(this->store_->GetLogs(t1, 0, 0, 0)->empty());
  EXPECT_EQ(this->store_->GetLogs(t1, 0, 0, -1).status().code(), ErrorCode::kInvalidArgument);

  auto other = this->store_->GetLogs(t2, -1, 0, 100);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other->size(), 1u);
  EXPECT_EQ((*other)[0].line, "other");
  EXPECT_EQ(this->store_->AddLogs({Line(t2 + 100, 0, "x")}).code(), ErrorCode::kInvalidArgument);
}

TYPED_TEST(StoreConformanceTest, LogIdsIncreaseUnderConcurrentWriters) {
  int64_t trial = this->NewTrial(this->NewExperiment());
  std::vector<std::thread> writers;
  for (int rank = 0; rank < 4; ++rank) {
    writers.emplace_back([this, trial, rank] {
      for (int i = 0; i < 25; ++i) EXPECT_TRUE(this->store_->AddLogs({Line(trial, rank, "l")}).ok());
    });
  }
  for (auto& w : writers) w.join();
  auto all = this->store_->GetLogs(trial, -1, 0, 1000);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 100u);
  for (size_t i = 1; i < all->size(); ++i) {
    EXPECT_GT((*all)[i].id, (*all)[i - 1].id);
  }
}

TYPED_TEST(StoreConformanceTest, UpsertsAgents) {
  AgentRecord b;
  b.id = "b-host";
  b.pool = "default";
  b.address = "10.0.0.2";
  b.state = AgentState::kConnected;
  b.slots = {{0, "cpu", ""}, {1, "cuda", "GPU-5d1c"}};
  ASSERT_TRUE(this->store_->UpsertAgent(b).ok());
  AgentRecord a = b;
  a.id = "a-host";
  ASSERT_TRUE(this->store_->UpsertAgent(a).ok());

  auto listed = this->store_->ListAgents();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].id, "a-host");
  EXPECT_EQ((*listed)[1].id, "b-host");
  EXPECT_EQ((*listed)[1].slots, b.slots);
  EXPECT_TRUE(LooksLikeRfc3339((*listed)[1].registered_at));
  EXPECT_TRUE(LooksLikeRfc3339((*listed)[1].last_seen_at));
  const std::string registered = (*listed)[1].registered_at;

  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  b.pool = "gpu";
  b.state = AgentState::kLost;
  b.registered_at = "1999-01-01T00:00:00.000Z";  // kept from the first insert
  b.last_seen_at = "2030-01-01T00:00:00.000Z";
  ASSERT_TRUE(this->store_->UpsertAgent(b).ok());
  listed = this->store_->ListAgents();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[1].pool, "gpu");
  EXPECT_EQ((*listed)[1].state, AgentState::kLost);
  EXPECT_EQ((*listed)[1].registered_at, registered);
  EXPECT_EQ((*listed)[1].last_seen_at, "2030-01-01T00:00:00.000Z");

  EXPECT_FALSE((*listed)[1].runs_as_owner);

  // Whether it runs tasks as their owners is what its last hello said.
  b.runs_as_owner = true;
  ASSERT_TRUE(this->store_->UpsertAgent(b).ok());
  listed = this->store_->ListAgents();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE((*listed)[1].runs_as_owner);
  EXPECT_FALSE((*listed)[0].runs_as_owner);

  b.state = static_cast<AgentState>(99);  // a value the enum does not name
  EXPECT_EQ(this->store_->UpsertAgent(b).code(), ErrorCode::kInvalidArgument);
  b.id = "";
  b.state = AgentState::kConnected;
  EXPECT_EQ(this->store_->UpsertAgent(b).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace ring
