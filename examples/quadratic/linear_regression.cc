#include "linear_regression.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>

namespace quadratic {

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::Uniform() {
  return static_cast<double>(Next() >> 11) * 0x1.0p-53;
}

double Rng::Normal() {
  double u1 = Uniform();
  double u2 = Uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

uint64_t Rng::Below(uint64_t n) {
  return Next() % n;
}

namespace {

Dataset Sample(Rng& rng, const std::vector<double>& w, double b, size_t n) {
  Dataset d;
  d.x.resize(n * kFeatures);
  d.y.resize(n);
  for (size_t i = 0; i < n; ++i) {
    double y = b;
    for (int f = 0; f < kFeatures; ++f) {
      double v = rng.Normal();
      d.x[i * kFeatures + f] = v;
      y += w[f] * v;
    }
    d.y[i] = y + 0.1 * rng.Normal();
  }
  return d;
}

}  // namespace

Problem MakeProblem(uint64_t seed, size_t train_size, size_t validation_size) {
  Rng rng(seed ^ 0x5155414452415449ull);  // "QUADRATI"
  std::vector<double> w(kFeatures);
  for (auto& v : w) v = rng.Normal();
  double b = rng.Normal();
  Problem p;
  p.train = Sample(rng, w, b, train_size);
  p.validation = Sample(rng, w, b, validation_size);
  return p;
}

LinearRegression::LinearRegression(const Dataset& train, SgdOptions options, uint64_t seed)
    : train_(train), options_(options), rng_(seed ^ 0x4F52444552ull), order_(train.size()) {
  std::iota(order_.begin(), order_.end(), size_t{0});
  Reshuffle();
}

void LinearRegression::Reshuffle() {
  for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng_.Below(i)]);
  next_ = 0;
}

double LinearRegression::Predict(const double* row) const {
  double p = weights_[kFeatures];
  for (int f = 0; f < kFeatures; ++f) p += weights_[f] * row[f];
  return p;
}

double LinearRegression::TrainBatch() {
  if (next_ + options_.batch_size > order_.size()) Reshuffle();
  std::vector<double> grad(kFeatures + 1, 0.0);
  double loss = 0;
  for (size_t k = 0; k < options_.batch_size; ++k) {
    size_t i = order_[next_ + k];
    const double* row = &train_.x[i * kFeatures];
    double err = Predict(row) - train_.y[i];
    loss += err * err;
    for (int f = 0; f < kFeatures; ++f) grad[f] += 2 * err * row[f];
    grad[kFeatures] += 2 * err;
  }
  next_ += options_.batch_size;
  const double n = static_cast<double>(options_.batch_size);
  for (int f = 0; f <= kFeatures; ++f) {
    velocity_[f] = options_.momentum * velocity_[f] + grad[f] / n;
    weights_[f] -= options_.learning_rate * velocity_[f];
  }
  return loss / n;
}

namespace {

constexpr char kStateMagic[8] = {'Q', 'U', 'A', 'D', 'S', 'T', '0', '1'};

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));  // little-endian
}

uint64_t GetU64(const std::string& in, size_t& pos) {
  if (pos + 8 > in.size()) throw std::runtime_error("model state is truncated");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += 8;
  return v;
}

}  // namespace

std::string LinearRegression::SaveState() const {
  std::string out(kStateMagic, sizeof kStateMagic);
  PutU64(out, rng_.state());
  PutU64(out, next_);
  PutU64(out, order_.size());
  for (size_t i : order_) PutU64(out, i);
  for (double w : weights_) PutU64(out, std::bit_cast<uint64_t>(w));
  for (double v : velocity_) PutU64(out, std::bit_cast<uint64_t>(v));
  return out;
}

void LinearRegression::LoadState(const std::string& bytes) {
  if (bytes.size() < sizeof kStateMagic || std::memcmp(bytes.data(), kStateMagic, sizeof kStateMagic) != 0)
    throw std::runtime_error("model state has an unknown format");
  size_t pos = sizeof kStateMagic;
  rng_.set_state(GetU64(bytes, pos));
  next_ = GetU64(bytes, pos);
  if (GetU64(bytes, pos) != order_.size())
    throw std::runtime_error("model state is for another data set size");
  for (auto& i : order_) {
    i = GetU64(bytes, pos);
    if (i >= order_.size()) throw std::runtime_error("model state has an index out of range");
  }
  for (auto& w : weights_) w = std::bit_cast<double>(GetU64(bytes, pos));
  for (auto& v : velocity_) v = std::bit_cast<double>(GetU64(bytes, pos));
  if (pos != bytes.size()) throw std::runtime_error("model state has trailing bytes");
}

double LinearRegression::MeanSquaredError(const Dataset& data) const {
  double sum = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    double err = Predict(&data.x[i * kFeatures]) - data.y[i];
    sum += err * err;
  }
  return data.size() ? sum / static_cast<double>(data.size()) : 0;
}

}  // namespace quadratic
