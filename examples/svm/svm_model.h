#pragma once
// The math of a multiclass linear SVM, with no I/O and no collectives: scores
// W x + b, the multiclass hinge loss (one-vs-rest or Crammer-Singer), its
// subgradient, the L2 penalty and the learning-rate schedule. Weights are
// float32 because the runtime's GradientReducer averages float32 buffers;
// sums run in double so that the results do not depend on summation order
// more than necessary.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace svm {

enum class Multiclass {
  kOneVsRest,      // sum over classes k of max(0, 1 - y_k s_k), y_k = +1 for the label, -1 otherwise
  kCrammerSinger,  // max(0, 1 + max_{k != label} s_k - s_label)
};

// "one_vs_rest" or "crammer_singer"; false for anything else.
bool ParseMulticlass(const std::string& name, Multiclass* out);
const char* MulticlassName(Multiclass m);

// Records as rows of `features` floats with a label each.
struct Features {
  size_t features = 0;
  std::vector<float> x;         // size() * features values
  std::vector<uint8_t> labels;  // 0 .. classes - 1
  size_t size() const { return labels.size(); }
  std::span<const float> row(size_t i) const { return {x.data() + i * features, features}; }
};

struct LinearSvm {
  size_t classes = 0;
  size_t features = 0;
  std::vector<float> weights;  // classes x features, row-major
  std::vector<float> bias;     // classes (not regularised)
};

// Weights uniform in [-scale, scale] drawn from `seed` (the same on every
// platform), bias zero.
LinearSvm MakeSvm(size_t classes, size_t features, uint64_t seed, double scale = 0.01);

// s_k = b_k + w_k . x for every class, in double.
void Scores(const LinearSvm& m, std::span<const float> x, std::span<double> scores);
// The highest-scoring class (the lowest index on ties).
size_t Predict(const LinearSvm& m, std::span<const float> x);
// The hinge loss of one record.
double HingeLoss(const LinearSvm& m, std::span<const float> x, size_t label, Multiclass loss);

// The gradient of (1/n) sum of hinge losses over data rows `indices`, plus
// the penalty's (regularization * W; none on the bias), into `grad_w`
// (classes x features) and `grad_b` (classes). Where the hinge has a kink the
// subgradient takes the flat side. Returns the sum (not the mean) of the
// hinge losses. With no indices the gradient is the penalty's alone.
double BatchGradient(const LinearSvm& m, const Features& data, std::span<const uint64_t> indices,
                     Multiclass loss, double regularization, std::span<float> grad_w,
                     std::span<float> grad_b);

// (regularization / 2) * |W|^2.
double Penalty(const LinearSvm& m, double regularization);
// Mean hinge loss over `indices` plus the penalty: what BatchGradient differentiates.
double Objective(const LinearSvm& m, const Features& data, std::span<const uint64_t> indices, Multiclass loss,
                 double regularization);

// Inverse-time decay: learning_rate / (1 + decay * (step - 1)) at step 1, 2, ...
// A function of the step alone, so a resumed run needs no optimiser state.
double LearningRate(double learning_rate, double decay, int64_t step);

// p -= lr * g, element by element.
void SgdUpdate(std::span<float> parameters, std::span<const float> gradient, double lr);

// FNV-1a over the little-endian bytes of the weights, then the bias: equal
// digests mean bitwise equal models.
uint64_t Digest(const LinearSvm& m);

}  // namespace svm
