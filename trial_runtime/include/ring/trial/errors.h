#pragma once
// Typed exceptions of the trial runtime's public API. Training loops catch
// TrialError (or one of its kinds) to report user mistakes clearly.
#include <stdexcept>
#include <string>

namespace ring::trial {

// Base of every exception the runtime throws on purpose.
class TrialError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A hyperparameter is missing or has the wrong type.
class HparamError : public TrialError {
 public:
  using TrialError::TrialError;
};

// The process environment or the local-mode flags are malformed
// (e.g. RING_HPARAMS is not JSON, --batches is not a number).
class ConfigError : public TrialError {
 public:
  using TrialError::TrialError;
};

// A metric report is invalid (negative batches, empty name) or could not be
// queued (queue full for longer than the enqueue timeout).
class MetricsError : public TrialError {
 public:
  using TrialError::TrialError;
};

// The master ended this allocation (it answered 409, or 401 for its token):
// another attempt of the trial may already be running, so this process must
// stop and exit non-zero without writing anything more.
class AllocationEndedError : public TrialError {
 public:
  using TrialError::TrialError;
};

// The master did not answer (connection errors, 5xx) for longer than the
// retry budget (RING_API_RETRY_SECONDS, default 120 s).
class MasterUnreachableError : public TrialError {
 public:
  using TrialError::TrialError;
};

// Rendezvous did not complete: not every rank arrived in time (the message
// names the ranks that never arrived), or the key-value store failed.
class RendezvousError : public TrialError {
 public:
  using TrialError::TrialError;
};

// A collective failed or timed out (a peer died, the network broke, or a
// rank called a different collective). The process group is unusable after.
class CollectiveError : public TrialError {
 public:
  using TrialError::TrialError;
};

}  // namespace ring::trial
