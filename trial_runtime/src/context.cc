#include "ring/trial/context.h"

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "distributed/master_store.h"
#include "http_metrics_sink.h"
#include "ring/trial/kv_store.h"
#include "runtime_flags.h"
#include "searcher_setup.h"
#include "trial_api.h"
#include "validation_clock.h"

extern char** environ;  // NOLINT: POSIX

namespace ring::trial {
namespace {

constexpr int64_t kLocalDefaultBatches = 100;

std::optional<std::string> Lookup(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

template <typename T>
std::optional<T> EnvNumber(const Environment& env, const std::string& name) {
  auto text = Lookup(env, name);
  if (!text) return std::nullopt;
  T value{};
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || ptr != text->data() + text->size())
    throw ConfigError(name + " must be a whole number, got \"" + *text + "\"");
  return value;
}

std::string FormatValue(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

namespace detail {
void ThrowHparamTypeError(const std::string& name, const char* expected, const nlohmann::json& value) {
  throw HparamError("hyperparameter \"" + name + "\" must be " + expected + ", got " + value.dump());
}
}  // namespace detail

struct Context::State {
  bool local = true;
  nlohmann::json hparams = nlohmann::json::object();
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  std::string allocation_id = "local";
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string agent_id = "local";
  std::string agent_address = "127.0.0.1";
  std::optional<int64_t> max_length_batches;
  uint64_t seed = 0;
  std::string latest_checkpoint;
  std::vector<std::string> remaining_args;
  std::ostream* out = &std::cout;
  std::ostream* diagnostics = &std::cerr;
  std::unique_ptr<MetricsReporter> reporter;  // cluster mode, chief only
  std::shared_ptr<detail::TrialApi> api;      // cluster mode
  std::chrono::seconds retry_for{120};        // RING_API_RETRY_SECONDS
  std::shared_ptr<detail::ValidationClock> validations;
  std::unique_ptr<Checkpoints> checkpoints;
  std::unique_ptr<Preemption> preemption;
  std::unique_ptr<Searcher> searcher;
};

Context::Context(std::unique_ptr<State> state) : state_(std::move(state)) {}
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;
Context::~Context() = default;

Context Context::from_environment(int argc, const char* const* argv) {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return from_environment(argc, argv, env);
}

Context Context::from_environment(int argc, const char* const* argv, const Environment& env,
                                  ContextOptions options) {
  auto s = std::make_unique<State>();
  if (options.local_out) s->out = options.local_out;
  if (options.diagnostics) s->diagnostics = options.diagnostics;
  RuntimeFlags flags = ParseRuntimeFlags(argc, argv);
  s->remaining_args = flags.remaining;
  s->local = !Lookup(env, "RING_MASTER_URL").has_value();

  s->rank = EnvNumber<int>(env, "RANK").value_or(0);
  s->world_size = EnvNumber<int>(env, "WORLD_SIZE").value_or(1);
  s->local_rank = EnvNumber<int>(env, "LOCAL_RANK").value_or(0);
  s->local_world_size = EnvNumber<int>(env, "LOCAL_WORLD_SIZE").value_or(1);
  if (s->world_size < 1 || s->rank < 0 || s->rank >= s->world_size)
    throw ConfigError("RANK " + std::to_string(s->rank) + " is not within WORLD_SIZE " +
                      std::to_string(s->world_size));
  s->latest_checkpoint = Lookup(env, "RING_LATEST_CHECKPOINT").value_or("");
  if (!s->local) s->agent_id = s->agent_address = "";
  if (auto id = Lookup(env, "RING_AGENT_ID")) s->agent_id = *id;
  if (auto address = Lookup(env, "RING_AGENT_ADDR")) s->agent_address = *address;

  nlohmann::json env_hparams = nlohmann::json::object();
  if (auto text = Lookup(env, "RING_HPARAMS")) {
    env_hparams = nlohmann::json::parse(*text, nullptr, false);
    if (env_hparams.is_discarded() || !env_hparams.is_object())
      throw ConfigError("RING_HPARAMS must be a JSON object, got: " + text->substr(0, 200));
  }

  if (s->local) {
    s->hparams = BuildLocalHparams(flags, std::move(env_hparams));
    s->max_length_batches = flags.batches.value_or(
        EnvNumber<int64_t>(env, "RING_MAX_LENGTH_BATCHES").value_or(kLocalDefaultBatches));
    s->seed = flags.seed.value_or(EnvNumber<uint64_t>(env, "RING_TRIAL_SEED").value_or(0));
    *s->diagnostics << "[ring.trial] local mode (RING_MASTER_URL is not set): " << *s->max_length_batches
                    << " batches, seed " << s->seed << ", hparams " << s->hparams.dump() << std::endl;
    if (flags.resume) s->latest_checkpoint = *flags.resume;
    s->checkpoints = std::make_unique<Checkpoints>(
        std::make_unique<SharedFsStorage>(flags.checkpoint_dir.value_or("checkpoints")), nullptr,
        s->latest_checkpoint, EnvNumber<int64_t>(env, "RING_MIN_CHECKPOINT_PERIOD_BATCHES").value_or(0));
    s->preemption = std::make_unique<Preemption>(nullptr);
    AttachValidationsAndSearcher(*s, env);
    return Context(std::move(s));
  }

  for (const auto& flag : flags.seen)
    *s->diagnostics << "[ring.trial] ignoring the local-mode flag " << flag << " under a master" << std::endl;
  s->hparams = std::move(env_hparams);
  s->trial_id = EnvNumber<int64_t>(env, "RING_TRIAL_ID").value_or(0);
  s->experiment_id = EnvNumber<int64_t>(env, "RING_EXPERIMENT_ID").value_or(0);
  s->max_length_batches = EnvNumber<int64_t>(env, "RING_MAX_LENGTH_BATCHES");
  s->seed = EnvNumber<uint64_t>(env, "RING_TRIAL_SEED").value_or(0);
  auto allocation = Lookup(env, "RING_ALLOCATION_ID");
  auto token = Lookup(env, "RING_ALLOCATION_TOKEN");
  if (!allocation || !token)
    throw ConfigError("RING_MASTER_URL is set but RING_ALLOCATION_ID or RING_ALLOCATION_TOKEN is missing");
  s->allocation_id = *allocation;
  const int64_t retry_seconds = EnvNumber<int64_t>(env, "RING_API_RETRY_SECONDS").value_or(120);
  if (retry_seconds < 0) throw ConfigError("RING_API_RETRY_SECONDS must not be negative");
  const auto retry_for = std::chrono::seconds(retry_seconds);
  s->retry_for = retry_for;
  if (Lookup(env, "RING_API_RETRY_SECONDS")) options.reporter.retry_for = retry_for;
  s->api =
      std::make_shared<detail::TrialApi>(*Lookup(env, "RING_MASTER_URL"), *allocation, *token, retry_for);
  std::unique_ptr<CheckpointStorage> storage;
  if (auto storage_text = Lookup(env, "RING_CHECKPOINT_STORAGE")) {
    auto config = nlohmann::json::parse(*storage_text, nullptr, false);
    if (config.is_discarded())
      throw ConfigError("RING_CHECKPOINT_STORAGE must be JSON, got: " + storage_text->substr(0, 200));
    storage = MakeCheckpointStorage(config);
  } else {
    *s->diagnostics << "[ring.trial] RING_CHECKPOINT_STORAGE is not set; checkpoints go to ./checkpoints"
                    << std::endl;
    storage = std::make_unique<SharedFsStorage>("checkpoints");
  }
  s->checkpoints = std::make_unique<Checkpoints>(
      std::move(storage), s->api, s->latest_checkpoint,
      EnvNumber<int64_t>(env, "RING_MIN_CHECKPOINT_PERIOD_BATCHES").value_or(0));
  s->preemption = std::make_unique<Preemption>(s->rank == 0 ? s->api : nullptr);
  if (s->rank == 0) {
    auto sink = std::move(options.sink);
    if (!sink) sink = std::make_unique<HttpMetricsSink>(*Lookup(env, "RING_MASTER_URL"), *allocation, *token);
    s->reporter = std::make_unique<MetricsReporter>(std::move(sink), std::move(options.reporter));
  }
  AttachValidationsAndSearcher(*s, env);
  return Context(std::move(s));
}

// The validation clock (shared with the checkpoints) and the searcher, whose
// hooks reach back into this State: it lives on the heap, so they stay valid
// when the Context moves.
void Context::AttachValidationsAndSearcher(State& s, const Environment& env) {
  const int64_t period = EnvNumber<int64_t>(env, "RING_MIN_VALIDATION_PERIOD_BATCHES").value_or(0);
  if (period < 0) throw ConfigError("RING_MIN_VALIDATION_PERIOD_BATCHES must not be negative");
  s.validations = std::make_shared<detail::ValidationClock>(period);
  s.checkpoints->validations_ = s.validations;
  detail::SearcherSetup setup;
  setup.api = s.api;
  setup.chief = s.rank == 0;
  setup.max_length = s.max_length_batches;
  setup.metric_name = Lookup(env, "RING_SEARCHER_METRIC").value_or("validation_loss");
  setup.out = s.out;
  setup.diagnostics = s.diagnostics;
  State* state = &s;
  setup.ensure_validation = [state](int64_t batches, const std::string& name, double metric) {
    const auto& clock = *state->validations;
    if (clock.HasMetricAt(batches, name)) return;
    if (clock.ReportedAt(batches))
      *state->diagnostics << "[ring.trial] the validation report at " << batches
                          << " batches did not include the searcher metric " << name
                          << "; reporting it on its own (the master keeps the first report at"
                             " these batches: include it there)"
                          << std::endl;
    Report(*state, MetricKind::kValidation, batches, {{name, metric}});
  };
  setup.settle_reports = [state] { SettleReports(*state, "the searcher completion"); };
  s.checkpoints->settle_reports_ = [state] { SettleReports(*state, "the checkpoint"); };
  s.preemption->before_acknowledge_ = [state] { state->checkpoints->wait(); };
  s.searcher = std::make_unique<Searcher>(std::move(setup));
}

bool Context::is_local() const {
  return state_->local;
}
const nlohmann::json& Context::hparams() const {
  return state_->hparams;
}
bool Context::has_hparam(const std::string& name) const {
  return state_->hparams.contains(name);
}

const nlohmann::json& Context::hparam_json(const std::string& name) const {
  auto it = state_->hparams.find(name);
  if (it != state_->hparams.end()) return *it;
  std::string known;
  for (const auto& [key, value] : state_->hparams.items()) known += (known.empty() ? "" : ", ") + key;
  std::string hint = state_->local ? " (pass --hparam " + name + "=VALUE or --hparams FILE.json)"
                                   : " (add it to the experiment's hyperparameters)";
  throw HparamError("hyperparameter \"" + name + "\" is missing; known: " + (known.empty() ? "none" : known) +
                    hint);
}

int64_t Context::trial_id() const {
  return state_->trial_id;
}
int64_t Context::experiment_id() const {
  return state_->experiment_id;
}
const std::string& Context::allocation_id() const {
  return state_->allocation_id;
}
int Context::rank() const {
  return state_->rank;
}
int Context::world_size() const {
  return state_->world_size;
}
int Context::local_rank() const {
  return state_->local_rank;
}
int Context::local_world_size() const {
  return state_->local_world_size;
}
const std::string& Context::agent_id() const {
  return state_->agent_id;
}
const std::string& Context::agent_address() const {
  return state_->agent_address;
}
uint64_t Context::seed() const {
  return state_->seed;
}
const std::string& Context::latest_checkpoint() const {
  return state_->latest_checkpoint;
}
const std::vector<std::string>& Context::remaining_args() const {
  return state_->remaining_args;
}

int64_t Context::max_length_batches() const {
  if (!state_->max_length_batches)
    throw ConfigError("RING_MAX_LENGTH_BATCHES is not set: the experiment needs searcher.max_length.batches");
  return *state_->max_length_batches;
}

void Context::report_training_metrics(int64_t batches, const std::map<std::string, double>& metrics) {
  report(MetricKind::kTraining, batches, metrics);
}

void Context::report_validation_metrics(int64_t batches, const std::map<std::string, double>& metrics) {
  report(MetricKind::kValidation, batches, metrics);
}

void Context::report(MetricKind kind, int64_t batches, const std::map<std::string, double>& metrics) {
  Report(*state_, kind, batches, metrics);
}

void Context::SettleReports(State& s, const char* before) {
  if (!s.reporter) return;
  const bool all = s.reporter->flush(s.retry_for + std::chrono::seconds(60));
  ThrowIfReportsCannotArrive(s);
  if (!all)
    *s.diagnostics << "[ring.trial] not every metric report was acknowledged before " << before << std::endl;
}

void Context::ThrowIfReportsCannotArrive(const State& s) {
  // The reporter drops what it can no longer deliver; the trial must stop.
  if (s.reporter->allocation_ended())
    throw AllocationEndedError(
        "the master ended this allocation and accepts no more metrics from it; "
        "this process must stop");
  if (s.reporter->master_unreachable())
    throw MasterUnreachableError(
        "the master did not acknowledge metrics within the retry budget "
        "(RING_API_RETRY_SECONDS); this process must stop");
}

void Context::Report(State& s, MetricKind kind, int64_t batches,
                     const std::map<std::string, double>& metrics) {
  if (batches < 0) throw MetricsError("metrics reported at negative batches " + std::to_string(batches));
  MetricReport r{kind, batches, {}};
  for (const auto& [name, value] : metrics) {
    if (name.empty()) throw MetricsError("a metric name is empty");
    if (!std::isfinite(value)) {
      *s.diagnostics << "[ring.trial] leaving out " << MetricKindName(kind) << " metric " << name
                     << " at batches " << batches << ": " << FormatValue(value) << " is not finite"
                     << std::endl;
      continue;
    }
    r.metrics.emplace(name, value);
  }
  // Every rank keeps the clock, so that validation_due() agrees across ranks.
  if (kind == MetricKind::kValidation && !r.metrics.empty()) s.validations->Reported(batches, r.metrics);
  if (s.local) {
    std::ostringstream line;
    line << "[ring.trial] " << MetricKindName(kind) << " batches=" << batches;
    for (const auto& [name, value] : r.metrics) line << ' ' << name << '=' << FormatValue(value);
    *s.out << line.str() << std::endl;
    return;
  }
  if (!s.reporter) return;
  ThrowIfReportsCannotArrive(s);
  if (r.metrics.empty()) return;
  s.reporter->enqueue(std::move(r));
}

bool Context::flush(std::chrono::milliseconds timeout) {
  return state_->reporter ? state_->reporter->flush(timeout) : true;
}

Checkpoints& Context::checkpoints() {
  return *state_->checkpoints;
}

Preemption& Context::preempt() {
  return *state_->preemption;
}

Searcher& Context::searcher() {
  return *state_->searcher;
}

bool Context::validation_due(int64_t batches) const {
  return state_->validations->Due(batches);
}

std::shared_ptr<KeyValueStore> AllocationStore(const Context& ctx) {
  if (ctx.state_->local) return InMemoryStore();
  return detail::MasterStoreOver(ctx.state_->api);
}

ReporterStats Context::reporter_stats() const {
  return state_->reporter ? state_->reporter->stats() : ReporterStats{};
}

}  // namespace ring::trial
