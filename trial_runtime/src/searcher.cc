#include "ring/trial/searcher.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <thread>

#include "ring/trial/errors.h"
#include "searcher_setup.h"
#include "trial_api.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;

constexpr int kPollSeconds = 30;          // the master holds `after=` requests this long
constexpr auto kPollHttpTimeout = 45s;    // the long poll plus slack
constexpr auto kMinPollInterval = 500ms;  // when a master answers a long poll at once

std::string FormatValue(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string Length(int64_t length) {
  return "the operation to " + std::to_string(length) + " batches";
}

}  // namespace

SearcherOperations::iterator::iterator(Searcher* searcher)
    : searcher_(searcher), current_(searcher->next_operation()) {}

SearcherOperations::iterator& SearcherOperations::iterator::operator++() {
  current_ = searcher_->next_operation();  // unchanged when it throws
  return *this;
}

void SearcherOperation::report_completed(double metric) const {
  searcher_->Complete(length_, metric);
}

Searcher::Searcher(detail::SearcherSetup setup)
    : setup_(std::make_unique<detail::SearcherSetup>(std::move(setup))), single_(!setup_->api) {}

Searcher::~Searcher() = default;

const std::string& Searcher::metric_name() const {
  return setup_->metric_name;
}

std::optional<SearcherOperation> Searcher::Give(int64_t length) {
  outstanding_ = length;
  return SearcherOperation(this, length);
}

std::optional<SearcherOperation> Searcher::next_operation() {
  if (outstanding_)
    throw TrialError("next_operation() was called again before " + Length(*outstanding_) +
                     " was completed: call report_completed(metric) on it first");
  if (done_) return std::nullopt;
  if (!single_) {
    auto op = AskMaster();
    if (op || !single_) return op;  // else: the master has no searcher operations (404)
  }
  if (last_completed_) {
    done_ = true;
    return std::nullopt;
  }
  if (!setup_->max_length)
    throw ConfigError("RING_MAX_LENGTH_BATCHES is not set: the experiment needs searcher.max_length.batches");
  return Give(*setup_->max_length);
}

// Asks until the master answers with an operation or "done". After the first
// operation every rank passes after=<last length>: the master answers once
// the chief's completion of it arrived (the chief's own request at once).
std::optional<SearcherOperation> Searcher::AskMaster() {
  for (;;) {
    const auto started = std::chrono::steady_clock::now();
    std::string path = "/searcher/operation";
    if (last_completed_)
      path += "?after=" + std::to_string(*last_completed_) + "&timeout_s=" + std::to_string(kPollSeconds);
    const auto reply = setup_->api->Call("GET", path, {}, kPollHttpTimeout);
    const std::string what = "asking the master for the next searcher operation";
    if (reply.status == 404 && !last_completed_) {
      *setup_->diagnostics << "[ring.trial] the master has no searcher operations ("
                           << detail::Describe(reply) << "): training one operation to max_length_batches"
                           << std::endl;
      single_ = true;
      return std::nullopt;
    }
    if (!reply.ok()) {
      detail::ThrowIfUnreachableOrEnded(reply, what);
      throw TrialError("the master refused " + what + ": " + detail::Describe(reply));
    }
    const auto& body = reply.body;
    const auto bad = [&](const std::string& why) {
      return TrialError("the master's answer to GET " + path + " is malformed (" + why +
                        "): " + body.dump().substr(0, 200));
    };
    if (!body.is_object() || !body.contains("done") || !body["done"].is_boolean()) throw bad("no \"done\"");
    const auto op = body.find("operation");
    if (op != body.end() && !op->is_null()) {
      if (!op->is_object() || !op->contains("length") || !(*op)["length"].is_number_integer())
        throw bad("operation has no integer length");
      const int64_t length = (*op)["length"].get<int64_t>();
      if (length < 0 || (last_completed_ && length <= *last_completed_))
        throw bad("length " + std::to_string(length) + " after " +
                  std::to_string(last_completed_.value_or(0)));
      return Give(length);
    }
    if (body["done"].get<bool>()) {
      done_ = true;
      return std::nullopt;
    }
    // The chief has not completed the last operation yet (or a master that
    // does not hold the request): ask again, without hammering it.
    const auto elapsed = std::chrono::steady_clock::now() - started;
    if (elapsed < kMinPollInterval) std::this_thread::sleep_for(kMinPollInterval - elapsed);
  }
}

void Searcher::Complete(int64_t length, double metric) {
  if (!std::isfinite(metric))
    throw MetricsError("the searcher metric " + setup_->metric_name + " of " + Length(length) + " is " +
                       FormatValue(metric) + ", not a finite number");
  if (!outstanding_ || *outstanding_ != length)
    throw TrialError(Length(length) + " is not outstanding: it was already completed");
  setup_->ensure_validation(length, setup_->metric_name, metric);
  if (!setup_->api) {
    *setup_->out << "[ring.trial] searcher operation length=" << length << " completed "
                 << setup_->metric_name << '=' << FormatValue(metric) << std::endl;
  } else if (setup_->chief) {
    // The metrics first, so that the searcher's decision (which may end the
    // experiment) never comes before the validation it was made on.
    setup_->settle_reports();
    if (!single_) {
      const nlohmann::json body = {{"length", length}, {"metric", metric}};
      const auto reply = setup_->api->Call("POST", "/searcher/completed", body.dump());
      const std::string what = "reporting the completion of " + Length(length);
      if (!reply.ok()) {
        detail::ThrowIfUnreachableOrEnded(reply, what);
        if (reply.status == 400)
          throw MetricsError("the master refused " + what + ": " + detail::Describe(reply));
        throw TrialError("the master refused " + what + ": " + detail::Describe(reply));
      }
      if (reply.body.is_object() && !reply.body.value("accepted", true))
        *setup_->diagnostics << "[ring.trial] the master had already taken the completion of "
                             << Length(length) << std::endl;
    }
  }
  outstanding_.reset();
  last_completed_ = length;
}

void Searcher::report_invalid_hparams(const std::string& message) {
  if (!setup_->api) {
    *setup_->out << "[ring.trial] invalid hyperparameters: " << message << std::endl;
    return;
  }
  if (!setup_->chief) return;
  const auto reply =
      setup_->api->Call("POST", "/searcher/invalid_hparams", nlohmann::json{{"message", message}}.dump());
  if (reply.ok()) return;
  const std::string what = "reporting invalid hyperparameters";
  if (reply.status == 404) {  // a master without searcher operations
    *setup_->diagnostics << "[ring.trial] the master does not take reports of invalid hyperparameters ("
                         << detail::Describe(reply) << ")" << std::endl;
    return;
  }
  detail::ThrowIfUnreachableOrEnded(reply, what);
  throw TrialError("the master refused " + what + ": " + detail::Describe(reply));
}

}  // namespace ring::trial
