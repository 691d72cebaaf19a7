#include "svm_model.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace svm {
namespace {

// splitmix64: a portable stream for the initial weights.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Adds the hinge subgradient of one record to (gw, gb) scaled by `scale`
// and returns its loss.
double AddRecord(const LinearSvm& m, std::span<const float> x, size_t label, Multiclass loss, double scale,
                 std::vector<double>& scores, std::vector<double>& gw, std::vector<double>& gb) {
  Scores(m, x, scores);
  auto add = [&](size_t k, double sign) {
    const double s = sign * scale;
    double* row = gw.data() + k * m.features;
    for (size_t j = 0; j < m.features; ++j) row[j] += s * x[j];
    gb[k] += s;
  };
  if (loss == Multiclass::kOneVsRest) {
    double sum = 0;
    for (size_t k = 0; k < m.classes; ++k) {
      const double y = k == label ? 1.0 : -1.0;
      const double margin = 1 - y * scores[k];
      if (margin > 0) {  // at the kink (margin == 0) the flat side: no gradient
        sum += margin;
        add(k, -y);
      }
    }
    return sum;
  }
  size_t rival = label == 0 ? 1 : 0;
  for (size_t k = 0; k < m.classes; ++k)
    if (k != label && scores[k] > scores[rival]) rival = k;
  const double margin = 1 + scores[rival] - scores[label];
  if (margin <= 0) return 0;
  add(rival, 1);
  add(label, -1);
  return margin;
}

}  // namespace

bool ParseMulticlass(const std::string& name, Multiclass* out) {
  if (name == "one_vs_rest")
    *out = Multiclass::kOneVsRest;
  else if (name == "crammer_singer")
    *out = Multiclass::kCrammerSinger;
  else
    return false;
  return true;
}

const char* MulticlassName(Multiclass m) {
  return m == Multiclass::kOneVsRest ? "one_vs_rest" : "crammer_singer";
}

LinearSvm MakeSvm(size_t classes, size_t features, uint64_t seed, double scale) {
  assert(classes >= 2 && features >= 1);
  LinearSvm m{classes, features, std::vector<float>(classes * features), std::vector<float>(classes, 0.0f)};
  uint64_t state = seed ^ 0x73766d0000000000ull;  // "svm": a stream apart from other uses of the seed
  for (float& w : m.weights) {
    const double unit = static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
    w = static_cast<float>((2 * unit - 1) * scale);
  }
  return m;
}

void Scores(const LinearSvm& m, std::span<const float> x, std::span<double> scores) {
  assert(x.size() == m.features && scores.size() == m.classes);
  for (size_t k = 0; k < m.classes; ++k) {
    const float* w = m.weights.data() + k * m.features;
    double s = m.bias[k];
    for (size_t j = 0; j < m.features; ++j) s += static_cast<double>(w[j]) * x[j];
    scores[k] = s;
  }
}

size_t Predict(const LinearSvm& m, std::span<const float> x) {
  std::vector<double> scores(m.classes);
  Scores(m, x, scores);
  return static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
}

double HingeLoss(const LinearSvm& m, std::span<const float> x, size_t label, Multiclass loss) {
  std::vector<double> scores(m.classes), gw(m.weights.size()), gb(m.classes);
  return AddRecord(m, x, label, loss, 0, scores, gw, gb);
}

double BatchGradient(const LinearSvm& m, const Features& data, std::span<const uint64_t> indices,
                     Multiclass loss, double regularization, std::span<float> grad_w,
                     std::span<float> grad_b) {
  assert(grad_w.size() == m.weights.size() && grad_b.size() == m.classes && data.features == m.features);
  std::vector<double> scores(m.classes), gw(m.weights.size(), 0.0), gb(m.classes, 0.0);
  const double scale = indices.empty() ? 0 : 1.0 / static_cast<double>(indices.size());
  double sum = 0;
  for (uint64_t i : indices) sum += AddRecord(m, data.row(i), data.labels[i], loss, scale, scores, gw, gb);
  for (size_t i = 0; i < gw.size(); ++i)
    grad_w[i] = static_cast<float>(gw[i] + regularization * static_cast<double>(m.weights[i]));
  for (size_t k = 0; k < m.classes; ++k) grad_b[k] = static_cast<float>(gb[k]);
  return sum;
}

double Penalty(const LinearSvm& m, double regularization) {
  double sq = 0;
  for (float w : m.weights) sq += static_cast<double>(w) * w;
  return 0.5 * regularization * sq;
}

double Objective(const LinearSvm& m, const Features& data, std::span<const uint64_t> indices, Multiclass loss,
                 double regularization) {
  double sum = 0;
  for (uint64_t i : indices) sum += HingeLoss(m, data.row(i), data.labels[i], loss);
  const double mean = indices.empty() ? 0 : sum / static_cast<double>(indices.size());
  return mean + Penalty(m, regularization);
}

double LearningRate(double learning_rate, double decay, int64_t step) {
  return learning_rate / (1 + decay * static_cast<double>(step - 1));
}

void SgdUpdate(std::span<float> parameters, std::span<const float> gradient, double lr) {
  assert(parameters.size() == gradient.size());
  for (size_t i = 0; i < parameters.size(); ++i)
    parameters[i] = static_cast<float>(static_cast<double>(parameters[i]) - lr * gradient[i]);
}

uint64_t Digest(const LinearSvm& m) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](const std::vector<float>& values) {
    for (float v : values) {
      const uint32_t bits = std::bit_cast<uint32_t>(v);
      for (int b = 0; b < 4; ++b) {
        h ^= (bits >> (8 * b)) & 0xffu;
        h *= 0x100000001b3ull;
      }
    }
  };
  mix(m.weights);
  mix(m.bias);
  return h;
}

}  // namespace svm
