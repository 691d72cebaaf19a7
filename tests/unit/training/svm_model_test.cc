// The svm example's core: the hinge losses' values and gradients (against
// central finite differences wherever the loss is differentiable), the
// learning-rate schedule, the weights file (bitwise round trip, clear
// errors), and data-parallel SGD: two ranks in threads over real Gloo
// sockets (an in-memory rendezvous store) start from rank 0's weights and
// follow the path of one rank that trains on both ranks' records, up to
// float rounding; and one rank learns the digits to over 95% accuracy.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "data_parallel_svm.h"
#include "digits_data.h"
#include "ring/trial/data_sampler.h"
#include "svm_checkpoint.h"
#include "svm_features.h"
#include "svm_model.h"
#include "tests/unit/distributed/distributed_thread_ranks.h"

namespace svm {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr size_t kClasses = 10;
constexpr size_t kFeatures = 64;

// Reproducible data: features in [0, 1), labels 0..9.
Features RandomFeatures(size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  Features f;
  f.features = kFeatures;
  for (size_t i = 0; i < n * kFeatures; ++i) f.x.push_back(unit(gen));
  for (size_t i = 0; i < n; ++i) f.labels.push_back(static_cast<uint8_t>(gen() % kClasses));
  return f;
}

TEST(SvmModel, HingeLossesOfAHandMadeRecord) {
  LinearSvm m{3, 1, {1.0f, 0.0f, -1.0f}, {0.0f, 0.5f, 0.0f}};  // scores at x = 1: 1, 0.5, -1
  const std::vector<float> x = {1.0f};
  // One-vs-rest, label 0: max(0, 1 - 1) + max(0, 1 + 0.5) + max(0, 1 - 1) = 1.5.
  EXPECT_DOUBLE_EQ(HingeLoss(m, x, 0, Multiclass::kOneVsRest), 1.5);
  // Crammer-Singer, label 0: max(0, 1 + 0.5 - 1) = 0.5; label 2: 1 + 1 - (-1) = 3.
  EXPECT_DOUBLE_EQ(HingeLoss(m, x, 0, Multiclass::kCrammerSinger), 0.5);
  EXPECT_DOUBLE_EQ(HingeLoss(m, x, 2, Multiclass::kCrammerSinger), 3.0);
  EXPECT_EQ(Predict(m, x), 0u);
}

TEST(SvmModel, MulticlassNamesParse) {
  Multiclass m = Multiclass::kOneVsRest;
  ASSERT_TRUE(ParseMulticlass("crammer_singer", &m));
  EXPECT_EQ(m, Multiclass::kCrammerSinger);
  ASSERT_TRUE(ParseMulticlass("one_vs_rest", &m));
  EXPECT_EQ(m, Multiclass::kOneVsRest);
  EXPECT_FALSE(ParseMulticlass("ovr", &m));
  EXPECT_STREQ(MulticlassName(Multiclass::kCrammerSinger), "crammer_singer");
}

// Central differences of the objective against BatchGradient, for every
// weight and bias. The objective is piecewise linear plus a quadratic, so a
// coordinate where the forward and backward differences agree has no kink
// within the step and its central difference is the derivative; those that
// disagree sit on a kink and are skipped (and must be few).
void CheckGradient(Multiclass loss, double regularization) {
  const Features data = RandomFeatures(40, 3);
  const std::vector<uint64_t> indices = {0, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  LinearSvm m = MakeSvm(kClasses, kFeatures, 9, 0.3);  // large enough that some margins hold and some fail
  for (size_t k = 0; k < kClasses; ++k) m.bias[k] = 0.1f * static_cast<float>(k) - 0.4f;
  std::vector<float> gw(m.weights.size()), gb(kClasses);
  const double hinge_sum = BatchGradient(m, data, indices, loss, regularization, gw, gb);
  EXPECT_NEAR(hinge_sum / static_cast<double>(indices.size()) + Penalty(m, regularization),
              Objective(m, data, indices, loss, regularization), 1e-12);

  size_t checked = 0, kinks = 0, nonzero = 0;
  auto check = [&](float& p, float analytic, const std::string& what) {
    const float original = p;
    const float h = 1.0f / 1024;  // exact in float, far above rounding of the objective
    p = original + h;
    const double up = Objective(m, data, indices, loss, regularization);
    p = original - h;
    const double down = Objective(m, data, indices, loss, regularization);
    p = original;
    const double here = Objective(m, data, indices, loss, regularization);
    const double step_up = static_cast<double>(original + h) - original;
    const double step_down = original - static_cast<double>(original - h);
    const double forward = (up - here) / step_up, backward = (here - down) / step_down;
    if (std::abs(forward - backward) > 1e-3 + regularization * 4 * h) {
      ++kinks;
      return;
    }
    ++checked;
    nonzero += analytic != 0;
    const double central = (up - down) / (step_up + step_down);
    EXPECT_NEAR(analytic, central, 1e-5 + 1e-5 * std::abs(central)) << what;
  };
  for (size_t i = 0; i < m.weights.size(); ++i) check(m.weights[i], gw[i], "weight " + std::to_string(i));
  for (size_t k = 0; k < kClasses; ++k) check(m.bias[k], gb[k], "bias " + std::to_string(k));
  EXPECT_GT(checked, (m.weights.size() + kClasses) * 9 / 10) << kinks << " kinks";
  EXPECT_GT(nonzero, checked / 2) << "most coordinates must carry a gradient for the check to mean much";
}

TEST(SvmModel, OneVsRestGradientMatchesFiniteDifferences) {
  CheckGradient(Multiclass::kOneVsRest, 0.01);
}

TEST(SvmModel, CrammerSingerGradientMatchesFiniteDifferences) {
  CheckGradient(Multiclass::kCrammerSinger, 0.01);
}

TEST(SvmModel, WithoutRecordsTheGradientIsThePenaltysAlone) {
  const Features data = RandomFeatures(4, 1);
  const LinearSvm m = MakeSvm(kClasses, kFeatures, 5);
  std::vector<float> gw(m.weights.size()), gb(kClasses, 1.0f);
  EXPECT_EQ(BatchGradient(m, data, {}, Multiclass::kOneVsRest, 0.5, gw, gb), 0.0);
  for (size_t i = 0; i < gw.size(); ++i) ASSERT_EQ(gw[i], static_cast<float>(0.5 * m.weights[i]));
  for (float g : gb) EXPECT_EQ(g, 0.0f);
}

TEST(SvmModel, LearningRateDecaysInverselyWithTheStep) {
  EXPECT_DOUBLE_EQ(LearningRate(0.2, 0.1, 1), 0.2);
  EXPECT_DOUBLE_EQ(LearningRate(0.2, 0.1, 11), 0.1);
  EXPECT_DOUBLE_EQ(LearningRate(0.2, 0.0, 1000), 0.2);
}

TEST(SvmModel, InitialWeightsDependOnTheSeedOnly) {
  EXPECT_EQ(Digest(MakeSvm(kClasses, kFeatures, 7)), Digest(MakeSvm(kClasses, kFeatures, 7)));
  EXPECT_NE(Digest(MakeSvm(kClasses, kFeatures, 7)), Digest(MakeSvm(kClasses, kFeatures, 8)));
  const LinearSvm m = MakeSvm(kClasses, kFeatures, 7, 0.01);
  for (float w : m.weights) ASSERT_LE(std::abs(w), 0.01f);
}

class SvmWeightsFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("svm-model-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string ReadError(const fs::path& file, LinearSvm& into) {
    try {
      ReadWeights(file, into);
    } catch (const ring::trial::CheckpointError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(SvmWeightsFile, RoundTripsBitForBit) {
  LinearSvm m = MakeSvm(kClasses, kFeatures, 11, 1.0);
  m.bias[3] = -0.0f;
  m.bias[4] = 1e-42f;  // a subnormal
  WriteWeights(dir_ / "w.bin", m);
  EXPECT_EQ(fs::file_size(dir_ / "w.bin"), 16 + 4 * (kClasses * kFeatures + kClasses));
  LinearSvm back = MakeSvm(kClasses, kFeatures, 12);
  ReadWeights(dir_ / "w.bin", back);
  EXPECT_EQ(Digest(back), Digest(m));
  EXPECT_TRUE(std::signbit(back.bias[3]));
}

TEST_F(SvmWeightsFile, MalformedFilesAreNamed) {
  LinearSvm m = MakeSvm(kClasses, kFeatures, 11);
  EXPECT_NE(ReadError(dir_ / "none.bin", m).find("none.bin is missing"), std::string::npos);
  WriteWeights(dir_ / "w.bin", m);
  fs::resize_file(dir_ / "w.bin", fs::file_size(dir_ / "w.bin") - 4);
  EXPECT_NE(ReadError(dir_ / "w.bin", m).find("w.bin holds a model of 10 classes x 64 features"),
            std::string::npos);
  std::ofstream(dir_ / "text.bin") << "not weights at all";
  EXPECT_NE(ReadError(dir_ / "text.bin", m).find("not an SVM weights file"), std::string::npos);
  LinearSvm other = MakeSvm(3, kFeatures, 1);
  WriteWeights(dir_ / "small.bin", other);
  EXPECT_NE(ReadError(dir_ / "small.bin", m).find("3 classes"), std::string::npos);
}

// The training and validation records of the real data set, or why not.
struct DigitsData {
  Features train, validation;
};
std::string LoadDigits(DigitsData* out) {
  if (!fs::exists(digits::kDefaultPath))
    return std::string(digits::kDefaultPath) + " is missing (Debian: python3-sklearn)";
  const digits::Split split = digits::SplitRecords(digits::Load(digits::kDefaultPath), 300, 0);
  *out = {FromDigits(split.train), FromDigits(split.validation)};
  return "";
}

struct RunResult {
  LinearSvm model;
  Evaluation evaluation;
  double hinge_sum = 0;  // over every step and rank
};

// `steps` of data-parallel SGD with `world` ranks of `batch` records each;
// rank r starts from the weights of seed `seed + r`, so only the broadcast
// makes them equal. Every rank's result, by rank.
std::vector<RunResult> Train(const DigitsData& data, int world, uint64_t batch, int64_t steps,
                             const SgdOptions& options, uint64_t seed) {
  std::vector<RunResult> results(static_cast<size_t>(world));
  ring::testing::RunGroup(world, {.backend = "gloo"}, [&](ring::trial::ProcessGroup& group) {
    RunResult& r = results[static_cast<size_t>(group.rank())];
    r.model = MakeSvm(kClasses, kFeatures, seed + static_cast<uint64_t>(group.rank()));
    DataParallelSvm sgd(group, r.model, options);
    sgd.BroadcastWeights();
    ring::trial::DistributedSampler sampler({.dataset_size = data.train.size(),
                                             .world_size = world,
                                             .rank = group.rank(),
                                             .batch_size = batch,
                                             .seed = 42,
                                             .drop_last = true});
    for (int64_t step = 1; step <= steps; ++step) {
      const ring::trial::SamplerBatch records = sampler.next();
      double hinge[1] = {sgd.Step(step, data.train, records.indices)};
      group.allreduce(std::span<double>(hinge), ring::trial::ReduceOp::kSum);
      r.hinge_sum += hinge[0];
    }
    r.evaluation = sgd.Evaluate(data.validation);
  });
  return results;
}

float MaxDifference(const LinearSvm& a, const LinearSvm& b) {
  float d = 0;
  for (size_t i = 0; i < a.weights.size(); ++i) d = std::max(d, std::abs(a.weights[i] - b.weights[i]));
  for (size_t k = 0; k < a.bias.size(); ++k) d = std::max(d, std::abs(a.bias[k] - b.bias[k]));
  return d;
}

TEST(DataParallelSvm, TwoRanksFollowOneRankOverTheSameRecords) {
  DigitsData data;
  if (auto why = LoadDigits(&data); !why.empty()) GTEST_SKIP() << why;
  for (Multiclass loss : {Multiclass::kOneVsRest, Multiclass::kCrammerSinger}) {
    SCOPED_TRACE(MulticlassName(loss));
    const SgdOptions options{
        .loss = loss, .learning_rate = 0.1, .lr_decay = 0.01, .regularization = 1e-4, .timeout = 60s};
    const auto one = Train(data, 1, 32, 120, options, 5);
    const auto two = Train(data, 2, 16, 120, options, 5);
    ASSERT_EQ(two.size(), 2u);
    // The ranks hold the same weights, bit for bit, and those of the one-rank run up to rounding.
    EXPECT_EQ(Digest(two[0].model), Digest(two[1].model));
    EXPECT_LT(MaxDifference(one[0].model, two[0].model), 1e-4f);
    EXPECT_GT(MaxDifference(one[0].model, MakeSvm(kClasses, kFeatures, 5)), 0.05f) << "it trained";
    EXPECT_NEAR(one[0].hinge_sum, two[0].hinge_sum, 1e-6 * one[0].hinge_sum);
    // Evaluation sums the ranks' shards: all 300 records, the same counts on every rank.
    EXPECT_EQ(two[0].evaluation.records, 300);
    EXPECT_EQ(two[0].evaluation.correct, two[1].evaluation.correct);
    EXPECT_EQ(two[0].evaluation.correct, one[0].evaluation.correct);
    EXPECT_NEAR(two[0].evaluation.hinge_sum, one[0].evaluation.hinge_sum, 1e-3);
  }
}

TEST(DataParallelSvm, OneRankLearnsTheDigits) {
  DigitsData data;
  if (auto why = LoadDigits(&data); !why.empty()) GTEST_SKIP() << why;
  // The example config's hyperparameters: 97-98% at 300 steps over the seeds tried.
  const SgdOptions options{.loss = Multiclass::kCrammerSinger,
                           .learning_rate = 1.0,
                           .lr_decay = 0.01,
                           .regularization = 1e-4,
                           .timeout = 60s};
  const auto one = Train(data, 1, 64, 300, options, 1);
  EXPECT_GE(one[0].evaluation.accuracy(), 0.95) << one[0].evaluation.correct << "/300";
}

}  // namespace
}  // namespace svm
