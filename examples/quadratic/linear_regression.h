#pragma once
// The quadratic example's model: synthetic linear regression (8 features)
// whose data and initial order come only from a seed, trained with minibatch
// SGD with optional momentum. Deterministic and dependency-free; owned by the
// trial's single thread.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace quadratic {

// SplitMix64: small, fast, and identical on every platform (unlike the
// standard library's distributions), so a seed means the same run everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  double Uniform();            // [0, 1)
  double Normal();             // standard normal (Box-Muller)
  uint64_t Below(uint64_t n);  // [0, n)
  uint64_t state() const { return state_; }
  void set_state(uint64_t s) { state_ = s; }

 private:
  uint64_t state_;
};

constexpr int kFeatures = 8;

struct Dataset {
  std::vector<double> x;  // rows of kFeatures values
  std::vector<double> y;
  std::size_t size() const { return y.size(); }
};

struct Problem {
  Dataset train;
  Dataset validation;
};

// y = w*·x + b* + 0.1·noise, with w*, b*, x and noise drawn from `seed`.
Problem MakeProblem(uint64_t seed, std::size_t train_size = 2048, std::size_t validation_size = 512);

struct SgdOptions {
  double learning_rate = 0.05;
  std::size_t batch_size = 32;
  double momentum = 0;
};

class LinearRegression {
 public:
  LinearRegression(const Dataset& train, SgdOptions options, uint64_t seed);

  // Trains on the next minibatch (reshuffling at each epoch); returns the
  // minibatch's mean squared error before the step.
  double TrainBatch();
  double MeanSquaredError(const Dataset& data) const;

  // Everything training depends on (weights, momentum, shuffling order and
  // position, RNG), as bytes: restoring them continues the run bit for bit.
  std::string SaveState() const;
  // Throws std::runtime_error on a state of another shape.
  void LoadState(const std::string& bytes);

 private:
  double Predict(const double* row) const;
  void Reshuffle();

  const Dataset& train_;
  SgdOptions options_;
  Rng rng_;
  std::vector<std::size_t> order_;
  std::size_t next_ = 0;
  std::vector<double> weights_ = std::vector<double>(kFeatures + 1, 0.0);  // last: bias
  std::vector<double> velocity_ = std::vector<double>(kFeatures + 1, 0.0);
};

}  // namespace quadratic
