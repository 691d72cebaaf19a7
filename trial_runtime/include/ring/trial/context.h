#pragma once
// ring::trial::Context: what a trial process knows about itself and how it
// reports. Built once in main() from the environment the agent set up:
//
//   int main(int argc, char** argv) {
//     auto ctx = ring::trial::Context::from_environment(argc, argv);
//     double lr = ctx.hparam<double>("learning_rate");
//     for (auto& op : ctx.searcher().operations()) {
//       while (b < op.length()) {
//         ...
//         ctx.report_training_metrics(++b, {{"loss", loss}});
//       }
//       ctx.report_validation_metrics(b, {{"validation_loss", v}});
//       op.report_completed(v);
//     }
//   }  // the destructor flushes
//
// Cluster mode (RING_MASTER_URL set): reports go to the master through a
// background sender (see MetricsReporter); only the chief (rank 0) sends them.
// Local mode (RING_MASTER_URL unset): hyperparameters come from
// `--hparams FILE.json` and repeated `--hparam key=value`, the length from
// `--batches N` (default 100, the length of the one searcher operation), the
// seed from `--seed S` (default 0), and metrics are printed to stdout. Owned by the training thread; the
// reporter's sender thread is internal.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "ring/trial/checkpoints.h"
#include "ring/trial/errors.h"
#include "ring/trial/metrics_reporter.h"
#include "ring/trial/metrics_sink.h"
#include "ring/trial/preemption.h"
#include "ring/trial/searcher.h"

namespace ring::trial {

class KeyValueStore;
using Environment = std::map<std::string, std::string>;

struct ContextOptions {
  ReporterOptions reporter;
  std::unique_ptr<MetricsSink> sink;    // replaces the HTTP sink (tests); cluster mode only
  std::ostream* local_out = nullptr;    // where local mode prints metrics; stdout when null
  std::ostream* diagnostics = nullptr;  // the local-mode banner and warnings; stderr when null
};

namespace detail {
[[noreturn]] void ThrowHparamTypeError(const std::string& name, const char* expected,
                                       const nlohmann::json& value);

template <typename T>
T ConvertHparam(const std::string& name, const nlohmann::json& v) {
  if constexpr (std::is_same_v<T, bool>) {
    if (v.is_boolean()) return v.get<bool>();
    ThrowHparamTypeError(name, "a boolean", v);
  } else if constexpr (std::is_integral_v<T>) {
    if (v.is_number_integer()) {
      if (v.is_number_unsigned()) {
        auto u = v.get<uint64_t>();
        if (u <= static_cast<uint64_t>(std::numeric_limits<T>::max())) return static_cast<T>(u);
      } else {
        auto i = v.get<int64_t>();
        if (i >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
            (i < 0 || static_cast<uint64_t>(i) <= static_cast<uint64_t>(std::numeric_limits<T>::max())))
          return static_cast<T>(i);
      }
      ThrowHparamTypeError(name, "an integer in range", v);
    }
    if (v.is_number_float()) {
      double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(std::numeric_limits<T>::min()) &&
          d <= static_cast<double>(std::numeric_limits<T>::max()))
        return static_cast<T>(d);
    }
    ThrowHparamTypeError(name, "an integer", v);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (v.is_number()) return v.get<T>();
    ThrowHparamTypeError(name, "a number", v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (v.is_string()) return v.get<std::string>();
    ThrowHparamTypeError(name, "a string", v);
  } else {
    try {
      return v.get<T>();
    } catch (const nlohmann::json::exception&) {
      ThrowHparamTypeError(name, "convertible to the requested type", v);
    }
  }
}
}  // namespace detail

class Context {
 public:
  // Reads the process environment (environ) and argv.
  static Context from_environment(int argc, const char* const* argv);
  // The same from a given environment; for tests and embedding.
  static Context from_environment(int argc, const char* const* argv, const Environment& env,
                                  ContextOptions options = {});

  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  ~Context();  // flushes (up to ReporterOptions::close_timeout)

  bool is_local() const;

  // The trial's hyperparameters (a JSON object; nested maps stay nested).
  const nlohmann::json& hparams() const;
  bool has_hparam(const std::string& name) const;
  // Throws HparamError when missing or of the wrong type.
  template <typename T>
  T hparam(const std::string& name) const {
    return detail::ConvertHparam<T>(name, hparam_json(name));
  }
  // Returns `fallback` when missing; throws HparamError when of the wrong type.
  template <typename T>
  T hparam(const std::string& name, T fallback) const {
    if (!has_hparam(name)) return fallback;
    return detail::ConvertHparam<T>(name, hparam_json(name));
  }

  int64_t trial_id() const;
  int64_t experiment_id() const;
  const std::string& allocation_id() const;
  int rank() const;
  int world_size() const;
  int local_rank() const;
  int local_world_size() const;
  bool is_chief() const { return rank() == 0; }
  // RING_AGENT_ID: ranks with the same id share a host ("local" in local mode).
  const std::string& agent_id() const;
  // RING_AGENT_ADDR: the address other ranks reach this host at (127.0.0.1 in
  // local mode); empty when the agent did not set it.
  const std::string& agent_address() const;
  // RING_MAX_LENGTH_BATCHES (searcher.max_length); --batches in local mode.
  // Throws ConfigError when the master did not provide it.
  int64_t max_length_batches() const;
  uint64_t seed() const;                                   // RING_TRIAL_SEED; --seed in local mode
  const std::string& latest_checkpoint() const;            // RING_LATEST_CHECKPOINT, empty if none
  const std::vector<std::string>& remaining_args() const;  // argv without the runtime's flags

  // Queue (cluster) or print (local) one report. Non-finite values are left
  // out with a warning. Throws MetricsError on negative batches or empty names.
  void report_training_metrics(int64_t batches, const std::map<std::string, double>& metrics);
  void report_validation_metrics(int64_t batches, const std::map<std::string, double>& metrics);

  // Waits until every report so far was acknowledged; false on timeout or when
  // the master refused some. Always true in local mode.
  bool flush(std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // min_validation_period (RING_MIN_VALIDATION_PERIOD_BATCHES): true when a
  // period is set and at least that many batches have passed since the last
  // validation report (report_validation_metrics() or a searcher completion,
  // on any rank) or the start. A checkpoint records the last validation and a
  // run resumed from it takes it back, so an interrupted trial validates at
  // the same batches as an uninterrupted one. Always false without a period.
  bool validation_due(int64_t batches) const;

  // The searcher's operations: how long to train, and where the searcher
  // metric goes (see searcher.h).
  Searcher& searcher();

  // Checkpoints in the experiment's checkpoint storage (local mode:
  // --checkpoint-dir, default ./checkpoints; resume with --resume DIR).
  Checkpoints& checkpoints();
  // Whether the platform asked this trial to checkpoint and stop.
  Preemption& preempt();

  // Counters of the reporter (all zero in local mode).
  ReporterStats reporter_stats() const;

 private:
  // Reaches the master through this context's trial API (its token and retries).
  friend std::shared_ptr<KeyValueStore> AllocationStore(const Context& ctx);

  struct State;
  explicit Context(std::unique_ptr<State> state);
  const nlohmann::json& hparam_json(const std::string& name) const;
  void report(MetricKind kind, int64_t batches, const std::map<std::string, double>& metrics);
  static void Report(State& s, MetricKind kind, int64_t batches,
                     const std::map<std::string, double>& metrics);
  static void ThrowIfReportsCannotArrive(const State& s);
  // Flushes the chief's reports before `before` (a searcher completion, a
  // checkpoint's registration); throws as ThrowIfReportsCannotArrive.
  static void SettleReports(State& s, const char* before);
  static void AttachValidationsAndSearcher(State& s, const Environment& env);

  std::unique_ptr<State> state_;
};

}  // namespace ring::trial
