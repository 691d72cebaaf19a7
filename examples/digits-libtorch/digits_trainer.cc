#include "digits_trainer.h"

#include <dlfcn.h>

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

#include "digits_data.h"
#include "digits_net.h"
#include "ring/trial/data_sampler.h"
#include "ring/trial/distributed.h"
#include "ring/trial/torch.h"

namespace digits {
namespace {

using ring::trial::ReduceOp;

// splitmix64's output function.
uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The dropout stream of one rank at one step: a function of the trial seed,
// the rank and the step alone, so a resumed run draws what an uninterrupted
// one would, with nothing to checkpoint.
uint64_t StepSeed(uint64_t seed, int rank, int64_t batch) {
  return Mix64(Mix64(seed ^ 0x6469676974730000ull) ^ Mix64(static_cast<uint64_t>(rank) + 1) ^
               static_cast<uint64_t>(batch)) >>
         1;
}

// One thread per rank: torch's, and OpenBLAS's when it is the BLAS (it reads
// OPENBLAS_NUM_THREADS only when it loads; run.sh sets that too).
void LimitThreads(int threads) {
  torch::set_num_threads(threads);
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(threads);
}

// One process's part of a data-parallel trial; runs on the main thread.
class Trainer {
 public:
  Trainer(ring::trial::Context& ctx, const Hparams& h, const Split& split)
      : ctx_(ctx),
        h_(h),
        group_(ring::trial::ConnectProcessGroup(ctx)),
        net_(MakeNet(ctx.seed(), h.dropout)),
        optimizer_(
            net_->parameters(),
            torch::optim::SGDOptions(h.learning_rate).momentum(h.momentum).weight_decay(h.weight_decay)),
        ddp_(*group_, *net_) {
    train_images_ = Images(split.train);
    train_labels_ = Labels(split.train);
    validation_images_ = Images(split.validation);
    validation_labels_ = Labels(split.validation);
    sampler_.emplace(ring::trial::SamplerOptions{.dataset_size = split.train.size(),
                                                 .world_size = group_->size(),
                                                 .rank = group_->rank(),
                                                 .batch_size = static_cast<uint64_t>(h.batch_size),
                                                 .seed = ctx.seed(),
                                                 .drop_last = true});
  }

  int Run() {
    std::printf(
        "digits: rank %d of %d (%s), trial %lld, seed %llu, %lld train / %lld validation records, "
        "%llu steps per epoch, learning_rate %g, batch_size %lld per rank\n",
        group_->rank(), group_->size(), group_->backend().c_str(), static_cast<long long>(ctx_.trial_id()),
        static_cast<unsigned long long>(ctx_.seed()), static_cast<long long>(train_labels_.size(0)),
        static_cast<long long>(validation_labels_.size(0)),
        static_cast<unsigned long long>(sampler_->steps_per_epoch()), h_.learning_rate,
        static_cast<long long>(h_.batch_size));
    if (auto from = ring::trial::RestoreTorchCheckpoint(ctx_, *group_, *net_, &optimizer_)) {
      sampler_->restore(ring::trial::SamplerState::FromJson(from->metadata.at("sampler")));
      loop_ = LoopState::FromJson(from->metadata.at("loop"));
      if (loop_.batch != from->batches)
        throw ring::trial::CheckpointError("checkpoint " + from->uuid + " is registered at " +
                                           std::to_string(from->batches) + " batches but holds batch " +
                                           std::to_string(loop_.batch));
      saved_at_ = loop_.batch;
      std::printf("digits: resumed from checkpoint %s at batch %lld (epoch %llu)\n", from->uuid.c_str(),
                  static_cast<long long>(loop_.batch), static_cast<unsigned long long>(sampler_->epoch()));
    }
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
      if (!validation_ || validation_->first != length) Validate(length);
      if (saved_at_ != loop_.batch && KeepsFinalState()) Save();
      op.report_completed(validation_->second.at(ctx_.searcher().metric_name()));
    }
    if (saved_at_ != loop_.batch && KeepsFinalState()) Save();
    Finish();
    return 0;
  }

 private:
  static Net MakeNet(uint64_t seed, double dropout) {
    torch::manual_seed(seed);  // rank 0's initial weights go to every rank anyway
    return Net(dropout);
  }

  // Trains until `length` batches; -1 when there, else the exit code (stopped, diverged).
  int TrainTo(int64_t length) {
    while (loop_.batch < length) {
      const int64_t batch = ++loop_.batch;
      double stats[3] = {0, 0, 0};  // loss summed over this rank's records, records, asked to stop
      const ring::trial::SamplerBatch records = sampler_->next();
      net_->train();
      if (!records.indices.empty()) {
        torch::manual_seed(StepSeed(ctx_.seed(), group_->rank(), batch));
        std::vector<int64_t> indices(records.indices.begin(), records.indices.end());
        const torch::Tensor at = torch::tensor(indices, torch::kInt64);
        torch::Tensor loss = torch::nn::functional::cross_entropy(
            net_->forward(train_images_.index_select(0, at)), train_labels_.index_select(0, at));
        loss.backward();
        stats[0] = loss.item<double>() * static_cast<double>(indices.size());
        stats[1] = static_cast<double>(indices.size());
      }
      ddp_.synchronize();
      optimizer_.step();
      if (h_.batch_sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(h_.batch_sleep_ms));
      // One small allreduce a step: the global training loss, and whether any
      // rank was asked to stop (only the chief hears the master; every rank
      // hears its own SIGTERM), so that every rank stops at the same step.
      stats[2] = LocalStop() ? 1 : 0;
      group_->allreduce(std::span<double>(stats), ReduceOp::kSum);
      if (!std::isfinite(stats[0]) || stats[0] / stats[1] > 1e6) {
        std::fprintf(stderr,
                     "digits_trial: error: training diverged at batch %lld (loss %g); lower learning_rate\n",
                     static_cast<long long>(batch), stats[0] / stats[1]);
        std::fflush(stdout);
        return 3;
      }
      loop_.loss_sum += stats[0];
      loop_.loss_records += stats[1];
      if (batch % h_.report_every == 0 || batch == length) {
        const double mean = loop_.loss_sum / loop_.loss_records;
        if (ctx_.is_chief())
          std::printf("digits: batch %lld/%lld epoch %llu loss %.6f\n", static_cast<long long>(batch),
                      static_cast<long long>(length), static_cast<unsigned long long>(records.epoch), mean);
        ctx_.report_training_metrics(batch, {{"loss", mean}});
        loop_.loss_sum = 0;
        loop_.loss_records = 0;
      }
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

  // Accuracy and loss over the whole validation set: each rank evaluates its
  // own contiguous shard, and the sums are added up over the ranks, so the
  // figures are exactly those of one process evaluating every record.
  void Validate(int64_t batches) {
    torch::NoGradGuard no_grad;
    net_->eval();
    const auto n = static_cast<uint64_t>(validation_labels_.size(0));
    const ring::trial::Shard shard = ring::trial::ShardOf(n, group_->size(), group_->rank());
    double sums[3] = {0, 0, static_cast<double>(shard.count())};  // loss, correct, records
    if (shard.count() > 0) {
      const auto begin = static_cast<int64_t>(shard.begin), count = static_cast<int64_t>(shard.count());
      const torch::Tensor labels = validation_labels_.narrow(0, begin, count);
      const torch::Tensor logits = net_->forward(validation_images_.narrow(0, begin, count));
      sums[0] = torch::nn::functional::cross_entropy(
                    logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .item<double>();
      sums[1] = logits.argmax(1).eq(labels).sum().item<double>();
    }
    group_->allreduce(std::span<double>(sums), ReduceOp::kSum);
    const double accuracy = sums[1] / sums[2];
    std::map<std::string, double> metrics = {{"validation_accuracy", accuracy},
                                             {"validation_error", 1 - accuracy},
                                             {"validation_loss", sums[0] / sums[2]}};
    if (ctx_.is_chief())
      std::printf("digits: batch %lld validation_accuracy %.4f (%lld/%lld) validation_loss %.6f\n",
                  static_cast<long long>(batches), accuracy, static_cast<long long>(sums[1]),
                  static_cast<long long>(sums[2]), metrics["validation_loss"]);
    ctx_.report_validation_metrics(batches, metrics);
    loop_.validated_at = batches;
    validation_ = {batches, metrics};
  }

  void Save() {
    const nlohmann::json metadata = {{"sampler", sampler_->state().to_json()},
                                     {"loop", loop_.ToJson()},
                                     {"world_size", group_->size()},
                                     {"batch_size", h_.batch_size}};
    ring::trial::SaveTorchCheckpoint(ctx_, loop_.batch, *net_, &optimizer_, metadata);
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
    std::printf("digits: asked to stop; checkpointed at batch %lld\n", static_cast<long long>(loop_.batch));
    Finish();
    ctx_.preempt().acknowledge();
    return 0;
  }

  void Finish() {
    const ring::trial::ReducerStats totals = ddp_.totals();
    std::printf(
        "digits: rank %d done at batch %lld; parameters %016llx; gradient allreduce %.3f s, waited %.3f s "
        "over %llu steps\n",
        group_->rank(), static_cast<long long>(loop_.batch),
        static_cast<unsigned long long>(ParameterDigest(*net_)),
        std::chrono::duration<double>(totals.reduce_time).count(),
        std::chrono::duration<double>(totals.wait_time).count(),
        static_cast<unsigned long long>(totals.iterations));
    std::fflush(stdout);
    if (!ctx_.flush())
      std::fprintf(stderr, "digits_trial: warning: not every metric report was acknowledged by the master\n");
  }

  ring::trial::Context& ctx_;
  const Hparams h_;
  std::unique_ptr<ring::trial::ProcessGroup> group_;
  Net net_;
  torch::optim::SGD optimizer_;
  ring::trial::DistributedModule ddp_;
  torch::Tensor train_images_, train_labels_, validation_images_, validation_labels_;
  std::optional<ring::trial::DistributedSampler> sampler_;
  LoopState loop_;
  int64_t saved_at_ = -1;  // batches of the checkpoint saved or resumed from
  std::optional<std::pair<int64_t, std::map<std::string, double>>> validation_;  // this process's last
};

}  // namespace

int Train(ring::trial::Context& ctx, const Hparams& h) {
  LimitThreads(static_cast<int>(h.threads));
  // The data first: a missing file fails before any rendezvous.
  const Split split = SplitRecords(Load(ResolvePath(h.data_path, std::getenv(kPathVariable))),
                                   static_cast<size_t>(h.validation_size), h.split_seed);
  Trainer trainer(ctx, h, split);
  return trainer.Run();
}

}  // namespace digits
