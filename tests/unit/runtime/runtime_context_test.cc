// Context: local-mode flags, a synthetic cluster environment, typed
// hyperparameter access and where reports go.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "ring/trial/context.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;

struct Args {
  explicit Args(std::vector<std::string> a) : storage(std::move(a)) {
    storage.insert(storage.begin(), "trial");
    for (auto& s : storage) ptrs.push_back(s.c_str());
  }
  int argc() const { return static_cast<int>(ptrs.size()); }
  const char* const* argv() const { return ptrs.data(); }
  std::vector<std::string> storage;
  std::vector<const char*> ptrs;
};

// Records reports; acknowledges everything.
class RecordingSink : public MetricsSink {
 public:
  explicit RecordingSink(std::shared_ptr<std::vector<MetricReport>> out) : out_(std::move(out)) {}
  SendResult send(const std::vector<MetricReport>& batch) override {
    out_->insert(out_->end(), batch.begin(), batch.end());
    return {};
  }

 private:
  std::shared_ptr<std::vector<MetricReport>> out_;
};

Environment ClusterEnv() {
  return {{"RING_MASTER_URL", "http://127.0.0.1:1"},
          {"RING_ALLOCATION_ID", "7.0"},
          {"RING_ALLOCATION_TOKEN", "secret"},
          {"RING_TRIAL_ID", "12"},
          {"RING_EXPERIMENT_ID", "7"},
          {"RING_HPARAMS", R"({"lr": 0.1, "batch_size": 32, "opt": {"name": "sgd"}, "flag": true})"},
          {"RING_MAX_LENGTH_BATCHES", "500"},
          {"RING_TRIAL_SEED", "99"},
          {"RING_LATEST_CHECKPOINT", "/ckpt/abc"},
          {"RANK", "0"},
          {"WORLD_SIZE", "2"},
          {"LOCAL_RANK", "0"},
          {"LOCAL_WORLD_SIZE", "1"}};
}

ContextOptions Quiet(std::ostream* out = nullptr) {
  static std::ostringstream sink;
  ContextOptions o;
  o.local_out = out ? out : &sink;
  o.diagnostics = &sink;
  o.reporter.close_timeout = 2s;
  return o;
}

TEST(RuntimeContextTest, LocalModeReadsFileThenAssignments) {
  std::string path = ::testing::TempDir() + "/hparams_local.json";
  std::ofstream(path) << R"({"lr": 0.5, "name": "base", "opt": {"momentum": 0.9, "nesterov": false}})";
  Args args({"--hparams", path, "--hparam", "lr=0.01", "--hparam=name=hello world", "--hparam",
             "opt.nesterov=true", "--hparam", "layers=[1,2]", "--batches", "40", "--seed=5", "--user-flag",
             "x"});
  auto ctx = Context::from_environment(args.argc(), args.argv(), {}, Quiet());
  EXPECT_TRUE(ctx.is_local());
  EXPECT_DOUBLE_EQ(ctx.hparam<double>("lr"), 0.01);
  EXPECT_EQ(ctx.hparam<std::string>("name"), "hello world");
  EXPECT_EQ(ctx.hparams()["opt"]["nesterov"], true);
  EXPECT_EQ(ctx.hparams()["opt"]["momentum"], 0.9);
  EXPECT_EQ(ctx.hparams()["layers"], nlohmann::json::parse("[1,2]"));
  EXPECT_EQ(ctx.max_length_batches(), 40);
  EXPECT_EQ(ctx.seed(), 5u);
  EXPECT_EQ(ctx.remaining_args(), (std::vector<std::string>{"--user-flag", "x"}));
  EXPECT_EQ(ctx.trial_id(), 0);
  EXPECT_TRUE(ctx.is_chief());
}

TEST(RuntimeContextTest, LocalModeDefaultsAndFlagErrors) {
  Args none({});
  auto ctx = Context::from_environment(none.argc(), none.argv(), {}, Quiet());
  EXPECT_EQ(ctx.max_length_batches(), 100);
  EXPECT_EQ(ctx.seed(), 0u);
  EXPECT_TRUE(ctx.hparams().empty());

  Args bad_batches({"--batches", "ten"});
  EXPECT_THROW(Context::from_environment(bad_batches.argc(), bad_batches.argv(), {}, Quiet()), ConfigError);
  Args no_value({"--seed"});
  EXPECT_THROW(Context::from_environment(no_value.argc(), no_value.argv(), {}, Quiet()), ConfigError);
  Args no_equals({"--hparam", "lr"});
  EXPECT_THROW(Context::from_environment(no_equals.argc(), no_equals.argv(), {}, Quiet()), ConfigError);
  Args missing_file({"--hparams", "/nonexistent/h.json"});
  EXPECT_THROW(Context::from_environment(missing_file.argc(), missing_file.argv(), {}, Quiet()), ConfigError);
}

TEST(RuntimeContextTest, LocalModePrintsReadableMetricLines) {
  std::ostringstream out;
  Args none({});
  auto ctx = Context::from_environment(none.argc(), none.argv(), {}, Quiet(&out));
  ctx.report_training_metrics(50, {{"loss", 0.25}, {"acc", 0.5}});
  ctx.report_validation_metrics(100, {{"validation_loss", 0.125}, {"bad", std::nan("")}});
  EXPECT_EQ(out.str(),
            "[ring.trial] training batches=50 acc=0.5 loss=0.25\n"
            "[ring.trial] validation batches=100 validation_loss=0.125\n");
  EXPECT_THROW(ctx.report_training_metrics(-1, {{"loss", 1}}), MetricsError);
  EXPECT_THROW(ctx.report_training_metrics(1, {{"", 1}}), MetricsError);
  EXPECT_TRUE(ctx.flush());
}

TEST(RuntimeContextTest, ClusterModeReadsTheEnvironment) {
  Args args({"--batches", "3"});  // ignored under a master
  auto ctx = Context::from_environment(args.argc(), args.argv(), ClusterEnv(), Quiet());
  EXPECT_FALSE(ctx.is_local());
  EXPECT_EQ(ctx.trial_id(), 12);
  EXPECT_EQ(ctx.experiment_id(), 7);
  EXPECT_EQ(ctx.allocation_id(), "7.0");
  EXPECT_EQ(ctx.rank(), 0);
  EXPECT_EQ(ctx.world_size(), 2);
  EXPECT_EQ(ctx.local_rank(), 0);
  EXPECT_TRUE(ctx.is_chief());
  EXPECT_EQ(ctx.max_length_batches(), 500);
  EXPECT_EQ(ctx.seed(), 99u);
  EXPECT_EQ(ctx.latest_checkpoint(), "/ckpt/abc");
  EXPECT_EQ(ctx.hparam<int>("batch_size"), 32);
  EXPECT_EQ(ctx.hparams()["opt"]["name"], "sgd");
}

TEST(RuntimeContextTest, TypedHparamErrorsNameTheProblem) {
  Args none({});
  auto ctx = Context::from_environment(none.argc(), none.argv(), ClusterEnv(), Quiet());
  EXPECT_DOUBLE_EQ(ctx.hparam<double>("batch_size"), 32.0);  // ints are numbers
  EXPECT_EQ(ctx.hparam<double>("momentum", 0.7), 0.7);
  EXPECT_TRUE(ctx.hparam<bool>("flag"));
  try {
    (void)ctx.hparam<double>("learning_rate");
    FAIL() << "expected HparamError";
  } catch (const HparamError& e) {
    EXPECT_NE(std::string(e.what()).find("\"learning_rate\" is missing"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lr"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)ctx.hparam<int>("lr"), HparamError);  // 0.1 is not an integer
  EXPECT_THROW((void)ctx.hparam<std::string>("lr"), HparamError);
}

TEST(RuntimeContextTest, ClusterEnvironmentErrors) {
  Args none({});
  auto env = ClusterEnv();
  env.erase("RING_ALLOCATION_TOKEN");
  EXPECT_THROW(Context::from_environment(none.argc(), none.argv(), env, Quiet()), ConfigError);
  env = ClusterEnv();
  env["RING_HPARAMS"] = "{not json";
  EXPECT_THROW(Context::from_environment(none.argc(), none.argv(), env, Quiet()), ConfigError);
  env = ClusterEnv();
  env["RANK"] = "2";
  EXPECT_THROW(Context::from_environment(none.argc(), none.argv(), env, Quiet()), ConfigError);
  env = ClusterEnv();
  env.erase("RING_MAX_LENGTH_BATCHES");
  auto ctx = Context::from_environment(none.argc(), none.argv(), env, Quiet());
  EXPECT_THROW((void)ctx.max_length_batches(), ConfigError);
}

TEST(RuntimeContextTest, ChiefReportsGoToTheSinkNonFiniteValuesLeftOut) {
  auto reports = std::make_shared<std::vector<MetricReport>>();
  Args none({});
  auto options = Quiet();
  options.sink = std::make_unique<RecordingSink>(reports);
  auto ctx = Context::from_environment(none.argc(), none.argv(), ClusterEnv(), std::move(options));
  ctx.report_training_metrics(10, {{"loss", 1.5}, {"grad", INFINITY}});
  ctx.report_validation_metrics(20, {{"validation_loss", 0.5}});
  ASSERT_TRUE(ctx.flush(2s));
  ASSERT_EQ(reports->size(), 2u);
  EXPECT_EQ((*reports)[0].kind, MetricKind::kTraining);
  EXPECT_EQ((*reports)[0].batches, 10);
  EXPECT_EQ((*reports)[0].metrics, (std::map<std::string, double>{{"loss", 1.5}}));
  EXPECT_EQ((*reports)[1].kind, MetricKind::kValidation);
  EXPECT_EQ(ctx.reporter_stats().acknowledged, 2u);
}

TEST(RuntimeContextTest, NonChiefRanksDoNotSend) {
  auto reports = std::make_shared<std::vector<MetricReport>>();
  Args none({});
  auto env = ClusterEnv();
  env["RANK"] = "1";
  auto options = Quiet();
  options.sink = std::make_unique<RecordingSink>(reports);
  auto ctx = Context::from_environment(none.argc(), none.argv(), env, std::move(options));
  EXPECT_FALSE(ctx.is_chief());
  ctx.report_training_metrics(10, {{"loss", 1.5}});
  EXPECT_TRUE(ctx.flush(1s));
  EXPECT_TRUE(reports->empty());
}

}  // namespace
}  // namespace ring::trial
