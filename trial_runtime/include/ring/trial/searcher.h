#pragma once
// Searcher operations: how long the experiment's searcher wants this trial to
// train. Each operation says "train until your total batches reach length(),
// validate, and report the searcher metric"; the trial asks for the next one
// until the searcher has nothing more for it:
//
//   for (auto& op : ctx.searcher().operations()) {
//     while (batches < op.length()) train_one_batch(++batches);
//     double v = validate();
//     ctx.report_validation_metrics(op.length(), {{"validation_loss", v}});
//     save_checkpoint(batches);
//     op.report_completed(v);
//   }
//   // nothing more now: the state is checkpointed, exit 0. A trial promoted
//   // later is restarted from its latest checkpoint.
//
// Under a master, every rank asks GET /api/v1/allocations/{id}/searcher/operation;
// after finishing an operation a rank passes `after=<its length>`, which the
// master holds (long poll) until the chief's completion arrived, so other
// ranks never run ahead of the chief. Only the chief (rank 0) posts
// completions and invalid hyperparameters. A master without searcher
// operations (404) gets one operation of max_length_batches(), completed by
// the validation metric alone. In local mode (no RING_MASTER_URL) there is
// exactly one operation of max_length_batches() (--batches), and completions
// are printed. Owned by the Context; call from the training thread.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

namespace ring::trial {

namespace detail {
struct SearcherSetup;
}

class Searcher;

// One "train until length() batches" request of the searcher. A small handle:
// copies refer to the same operation.
class SearcherOperation {
 public:
  // The total batches the trial must have trained when it completes this operation.
  int64_t length() const { return length_; }

  // Completes the operation with the searcher metric (metric_name()) at length().
  // First makes sure the metric is a validation metric at length(): when the
  // last validation report at length() did not include it, it is reported
  // there (so the usual report_validation_metrics() call is not doubled).
  // Then the chief waits until the master acknowledged every metric report so
  // far and posts the completion (retried); other ranks post nothing. Local
  // mode prints it. Throws MetricsError for a non-finite metric (on every
  // rank), TrialError when the operation is not the outstanding one (already
  // completed), AllocationEndedError or MasterUnreachableError as every call.
  void report_completed(double metric) const;

 private:
  friend class Searcher;
  SearcherOperation(Searcher* searcher, int64_t length) : searcher_(searcher), length_(length) {}

  Searcher* searcher_;
  int64_t length_;
};

// The operations as a range: each step asks next_operation(), so complete the
// current operation inside the loop body.
class SearcherOperations {
 public:
  class iterator {
   public:
    using value_type = SearcherOperation;
    using difference_type = std::ptrdiff_t;

    SearcherOperation& operator*() { return *current_; }
    SearcherOperation* operator->() { return &*current_; }
    iterator& operator++();
    void operator++(int) { ++*this; }
    bool operator==(std::default_sentinel_t) const { return !current_.has_value(); }

   private:
    friend class SearcherOperations;
    explicit iterator(Searcher* searcher);
    Searcher* searcher_;
    std::optional<SearcherOperation> current_;
  };

  iterator begin() { return iterator(searcher_); }  // asks for the first operation
  std::default_sentinel_t end() { return {}; }

 private:
  friend class Searcher;
  explicit SearcherOperations(Searcher* searcher) : searcher_(searcher) {}
  Searcher* searcher_;
};

class Searcher {
 public:
  explicit Searcher(detail::SearcherSetup setup);  // built by the Context
  ~Searcher();
  Searcher(const Searcher&) = delete;
  Searcher& operator=(const Searcher&) = delete;

  // Blocks until the master has the next operation for this trial; nullopt
  // when it has none now (the searcher closed the trial, or it waits for
  // other trials before promoting this one): checkpoint and exit 0. Stays
  // nullopt once it was. Throws TrialError when the previous operation was
  // not completed yet, AllocationEndedError (401, 409), MasterUnreachableError
  // (no answer within RING_API_RETRY_SECONDS), TrialError for a malformed answer.
  std::optional<SearcherOperation> next_operation();

  // `for (auto& op : ctx.searcher().operations()) { ...; op.report_completed(v); }`
  SearcherOperations operations() { return SearcherOperations(this); }

  // Tells the master these hyperparameters cannot be trained (the chief posts
  // it; other ranks do nothing; local mode prints it). The trial should exit
  // afterwards, with any code: the master replaces it with another trial and
  // does not count it. Throws AllocationEndedError or MasterUnreachableError.
  void report_invalid_hparams(const std::string& message);

  // The searcher metric (RING_SEARCHER_METRIC, searcher.metric), "validation_loss" when unset.
  const std::string& metric_name() const;

 private:
  friend class SearcherOperation;
  void Complete(int64_t length, double metric);
  std::optional<SearcherOperation> AskMaster();
  std::optional<SearcherOperation> Give(int64_t length);

  std::unique_ptr<detail::SearcherSetup> setup_;
  std::optional<int64_t> outstanding_;     // given, not yet completed
  std::optional<int64_t> last_completed_;  // length of the last completed operation
  bool done_ = false;                      // the searcher has nothing more for this process
  bool single_ = false;                    // local mode, or a master without searcher operations (404)
};

}  // namespace ring::trial
