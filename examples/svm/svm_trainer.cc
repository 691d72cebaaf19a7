#include "svm_trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "data_parallel_svm.h"
#include "digits_data.h"
#include "ring/trial/data_sampler.h"
#include "ring/trial/distributed.h"
#include "svm_checkpoint.h"
#include "svm_features.h"

namespace svm {
namespace {

using ring::trial::ReduceOp;

// One process's part of a data-parallel trial; runs on the main thread.
class Trainer {
 public:
  Trainer(ring::trial::Context& ctx, const Hparams& h, const digits::Split& split)
      : ctx_(ctx),
        h_(h),
        train_(FromDigits(split.train)),
        validation_(FromDigits(split.validation)),
        group_(ring::trial::ConnectProcessGroup(ctx)),
        model_(MakeSvm(digits::kClasses, digits::kPixels, ctx.seed())),
        sgd_(*group_, model_,
             {.loss = h.multiclass,
              .learning_rate = h.learning_rate,
              .lr_decay = h.lr_decay,
              .regularization = h.regularization}),
        sampler_(ring::trial::SamplerOptions{.dataset_size = train_.size(),
                                             .world_size = group_->size(),
                                             .rank = group_->rank(),
                                             .batch_size = static_cast<uint64_t>(h.batch_size),
                                             .seed = ctx.seed(),
                                             .drop_last = true}) {}

  int Run() {
    std::printf(
        "svm: rank %d of %d (%s), trial %lld, seed %llu, %zu train / %zu validation records, "
        "%llu steps per epoch, %s hinge loss, learning_rate %g, lr_decay %g, regularization %g, "
        "batch_size %lld per rank\n",
        group_->rank(), group_->size(), group_->backend().c_str(), static_cast<long long>(ctx_.trial_id()),
        static_cast<unsigned long long>(ctx_.seed()), train_.size(), validation_.size(),
        static_cast<unsigned long long>(sampler_.steps_per_epoch()), MulticlassName(h_.multiclass),
        h_.learning_rate, h_.lr_decay, h_.regularization, static_cast<long long>(h_.batch_size));
    if (auto from = RestoreSvmCheckpoint(ctx_, *group_, model_)) {
      sampler_.restore(ring::trial::SamplerState::FromJson(from->metadata.at("sampler")));
      loop_ = LoopState::FromJson(from->metadata.at("loop"));
      if (loop_.batch != from->batches)
        throw ring::trial::CheckpointError("checkpoint " + from->uuid + " is registered at " +
                                           std::to_string(from->batches) + " batches but holds batch " +
                                           std::to_string(loop_.batch));
      saved_at_ = loop_.batch;
      std::printf("svm: resumed from checkpoint %s at batch %lld (epoch %llu)\n", from->uuid.c_str(),
                  static_cast<long long>(loop_.batch), static_cast<unsigned long long>(sampler_.epoch()));
    }
    // Every rank starts from rank 0's weights: its fresh ones, or the checkpoint's.
    sgd_.BroadcastWeights();
    bool first = true;
    for (auto& op : ctx_.searcher().operations()) {
      const int64_t length = op.length();
      if (length < loop_.batch)
        throw std::runtime_error("the searcher asked for training to " + std::to_string(length) +
                                 " batches, but this trial has already trained " +
                                 std::to_string(loop_.batch));
      // A stop asked for while the last operation ended: do not start the next one.
      if (!first && loop_.batch < length && AnyRankAskedToStop(LocalStop())) return Stop();
      first = false;
      if (int code = TrainTo(length); code >= 0) return code;
      // Resumed exactly at the end of an operation not completed yet: validate again (the same values).
      if (!last_validation_ || last_validation_->first != length) Validate(length);
      if (saved_at_ != loop_.batch && KeepsFinalState()) Save();
      op.report_completed(last_validation_->second.at(ctx_.searcher().metric_name()));
    }
    if (saved_at_ != loop_.batch && KeepsFinalState()) Save();
    Finish();
    return 0;
  }

 private:
  // Trains until `length` batches; -1 when there, else the exit code (stopped, diverged).
  int TrainTo(int64_t length) {
    while (loop_.batch < length) {
      const int64_t batch = ++loop_.batch;
      const ring::trial::SamplerBatch records = sampler_.next();
      double stats[3] = {0, static_cast<double>(records.indices.size()), 0};  // hinge sum, records, stop
      stats[0] = sgd_.Step(batch, train_, records.indices);
      if (h_.batch_sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(h_.batch_sleep_ms));
      // One small allreduce a step: the global training loss, and whether any
      // rank was asked to stop (only the chief hears the master; every rank
      // hears its own SIGTERM), so that every rank stops at the same step.
      stats[2] = LocalStop() ? 1 : 0;
      group_->allreduce(std::span<double>(stats), ReduceOp::kSum);
      const double mean = stats[0] / stats[1];
      if (!std::isfinite(mean) || mean > 1e6 || !std::isfinite(Penalty(model_, 1))) {
        std::fprintf(
            stderr,
            "svm_trial: error: training diverged at batch %lld (hinge loss %g); lower learning_rate\n",
            static_cast<long long>(batch), mean);
        std::fflush(stdout);
        return 3;
      }
      loop_.loss_sum += stats[0];
      loop_.loss_records += stats[1];
      if (batch % h_.report_every == 0 || batch == length) ReportTraining(batch, length, records.epoch);
      if (loop_.validated_at != batch && (batch == length || ctx_.validation_due(batch) ||
                                          (h_.validate_every > 0 && batch % h_.validate_every == 0)))
        Validate(batch);
      const bool stop = stats[2] > 0;
      if (stop || ctx_.checkpoints().due(batch) ||
          (h_.checkpoint_every > 0 && batch % h_.checkpoint_every == 0))
        Save();
      if (stop && batch < length) return Stop();
    }
    return -1;
  }

  // The hinge loss over the records since the last report, and the objective
  // SGD minimises (that plus the L2 penalty at the current weights).
  void ReportTraining(int64_t batch, int64_t length, uint64_t epoch) {
    const double hinge = loop_.loss_sum / loop_.loss_records;
    const double loss = hinge + Penalty(model_, h_.regularization);
    if (ctx_.is_chief())
      std::printf("svm: batch %lld/%lld epoch %llu loss %.6f hinge_loss %.6f\n",
                  static_cast<long long>(batch), static_cast<long long>(length),
                  static_cast<unsigned long long>(epoch), loss, hinge);
    ctx_.report_training_metrics(batch, {{"loss", loss}, {"hinge_loss", hinge}});
    loop_.loss_sum = 0;
    loop_.loss_records = 0;
  }

  void Validate(int64_t batches) {
    const Evaluation e = sgd_.Evaluate(validation_);
    std::map<std::string, double> metrics = {{"validation_accuracy", e.accuracy()},
                                             {"validation_error", 1 - e.accuracy()},
                                             {"validation_loss", e.mean_hinge()}};
    if (ctx_.is_chief())
      std::printf("svm: batch %lld validation_accuracy %.4f (%lld/%lld) validation_loss %.6f\n",
                  static_cast<long long>(batches), e.accuracy(), static_cast<long long>(e.correct),
                  static_cast<long long>(e.records), e.mean_hinge());
    ctx_.report_validation_metrics(batches, metrics);
    loop_.validated_at = batches;
    last_validation_ = {batches, std::move(metrics)};
  }

  void Save() {
    const nlohmann::json metadata = {{"sampler", sampler_.state().to_json()},
                                     {"loop", loop_.ToJson()},
                                     {"world_size", group_->size()},
                                     {"batch_size", h_.batch_size}};
    SaveSvmCheckpoint(ctx_, loop_.batch, model_, metadata);
    saved_at_ = loop_.batch;
  }

  // The end of an operation is always checkpointed under a master (a promoted
  // or restarted trial resumes there); locally only when checkpoints are on.
  bool KeepsFinalState() const { return !ctx_.is_local() || h_.checkpoint_every > 0; }

  bool LocalStop() { return ctx_.preempt().should_preempt(); }

  bool AnyRankAskedToStop(bool mine) {
    double flag[1] = {mine ? 1.0 : 0.0};
    group_->allreduce(std::span<double>(flag), ReduceOp::kSum);
    return flag[0] > 0;
  }

  // Asked to stop (pause, preemption): checkpoint, acknowledge, exit 0.
  int Stop() {
    if (saved_at_ != loop_.batch) Save();
    std::printf("svm: asked to stop; checkpointed at batch %lld\n", static_cast<long long>(loop_.batch));
    Finish();
    ctx_.preempt().acknowledge();
    return 0;
  }

  void Finish() {
    const ring::trial::ReducerStats totals = sgd_.totals();
    std::printf(
        "svm: rank %d done at batch %lld; weights %016llx; gradient allreduce %.3f s, waited %.3f s "
        "over %llu steps\n",
        group_->rank(), static_cast<long long>(loop_.batch), static_cast<unsigned long long>(Digest(model_)),
        std::chrono::duration<double>(totals.reduce_time).count(),
        std::chrono::duration<double>(totals.wait_time).count(),
        static_cast<unsigned long long>(totals.iterations));
    std::fflush(stdout);
    if (!ctx_.flush())
      std::fprintf(stderr, "svm_trial: warning: not every metric report was acknowledged by the master\n");
  }

  ring::trial::Context& ctx_;
  const Hparams h_;
  const Features train_, validation_;
  std::unique_ptr<ring::trial::ProcessGroup> group_;
  LinearSvm model_;
  DataParallelSvm sgd_;
  ring::trial::DistributedSampler sampler_;
  LoopState loop_;
  int64_t saved_at_ = -1;  // batches of the checkpoint saved or resumed from
  std::optional<std::pair<int64_t, std::map<std::string, double>>> last_validation_;  // this process's last
};

}  // namespace

int Train(ring::trial::Context& ctx, const Hparams& h) {
  // The data first: a missing file fails before any rendezvous.
  const digits::Split split =
      digits::SplitRecords(digits::Load(digits::ResolvePath(h.data_path, std::getenv(digits::kPathVariable))),
                           static_cast<size_t>(h.validation_size), h.split_seed);
  Trainer trainer(ctx, h, split);
  return trainer.Run();
}

}  // namespace svm
