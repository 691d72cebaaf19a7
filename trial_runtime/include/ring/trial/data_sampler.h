#pragma once
// Which records of a data set each rank trains on, step by step, so that the
// ranks of a data-parallel trial see every record once per epoch, in an
// order that is the same on every platform and for every world size, and so
// that a checkpointed trial resumes where it stopped, even with a different
// number of ranks or batch size.
//
//   DistributedSampler sampler({.dataset_size = n, .world_size = ctx.world_size(),
//                               .rank = ctx.rank(), .batch_size = 32, .seed = ctx.seed()});
//   if (auto from = ctx.checkpoints().latest_verified())
//     sampler.restore(SamplerState::FromJson(from->metadata["sampler"]));
//   while (b < op.length()) {
//     SamplerBatch batch = sampler.next();   // this rank's records of the next global step
//     TrainOn(batch.indices);
//     if (sampler.steps_remaining_in_epoch() == 0) Validate();  // the epoch ended on every rank
//   }
//   ctx.checkpoints().save(b, Write, {{"sampler", sampler.state().to_json()}});
//
// Order. Epoch e visits the records in EpochPermutation(n, seed, e): a
// Fisher-Yates shuffle driven by xoshiro256** whose four words are the first
// four outputs of splitmix64 started at Mix64(seed) ^ e (Mix64 is splitmix64's
// output function), with an unbiased bounded draw (rejection of the low
// (2^64 - b) mod b values, then modulo b). Nothing depends on the world size.
//
// Steps. Each global step takes the next min(W * B, records left) records of
// the permutation (W ranks, B records per rank). They are split contiguously:
// rank r gets T/W records, plus one when r < T mod W, starting after those of
// ranks 0..r-1. A full step gives every rank exactly B records; the last step
// of an epoch may be short, and then some ranks get one record fewer than
// others (or none when fewer than W records are left). With drop_last the
// short last step is skipped instead: its records are not visited that
// epoch. Every rank computes the same steps_remaining_in_epoch(), so every
// rank runs the same number of collectives.
//
// State. The position is global (records of this epoch already handed out
// over all ranks), so a state saved with W ranks and restored with W' ranks
// and batch size B' continues with exactly the records not yet seen that
// epoch. Not thread-safe: one sampler per rank, used by its training thread.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace ring::trial {

struct SamplerOptions {
  uint64_t dataset_size = 0;  // records, at least 1
  int world_size = 1;         // ranks sharing each step
  int rank = 0;               // 0 <= rank < world_size
  uint64_t batch_size = 1;    // records per rank per step (the same on every rank)
  uint64_t seed = 0;          // the same on every rank
  bool shuffle = true;        // false: every epoch visits 0, 1, ..., n-1
  bool drop_last = false;     // skip an epoch's short last step
};

// Where a sampler stands; identical on every rank after the same steps.
struct SamplerState {
  uint64_t epoch = 0;
  uint64_t position = 0;  // records of this epoch handed out over all ranks
  uint64_t dataset_size = 0;
  uint64_t seed = 0;

  // {"epoch": .., "position": .., "dataset_size": .., "seed": ..}
  nlohmann::json to_json() const;
  // Throws ConfigError naming the missing or malformed field.
  static SamplerState FromJson(const nlohmann::json& json);
  bool operator==(const SamplerState&) const = default;
};

// One global step as seen by one rank.
struct SamplerBatch {
  uint64_t epoch = 0;
  uint64_t global_begin = 0;      // epoch position of the step's first record
  uint64_t global_size = 0;       // records in the step over all ranks (W * B but in a short step)
  std::vector<uint64_t> indices;  // this rank's records, in permutation order
};

class DistributedSampler {
 public:
  // Throws ConfigError for a bad option (naming it), and when drop_last
  // leaves no step in an epoch (world_size * batch_size > dataset_size).
  explicit DistributedSampler(const SamplerOptions& options);

  // This rank's part of the next global step. When the epoch has no step
  // left, the next epoch starts first (reshuffled).
  SamplerBatch next();

  // Global steps left in the current epoch (0 once it is over); the same on
  // every rank.
  uint64_t steps_remaining_in_epoch() const;
  // Global steps in a whole epoch with these options.
  uint64_t steps_per_epoch() const;

  uint64_t epoch() const { return epoch_; }
  uint64_t position() const { return position_; }
  const SamplerOptions& options() const { return options_; }

  SamplerState state() const;
  // Continues from `state` (possibly saved with other ranks or batch size).
  // Throws ConfigError when it belongs to another data set size or seed, or
  // its position lies beyond the data set.
  void restore(const SamplerState& state);

 private:
  void shuffle_for_epoch();  // computes the permutation of epoch_ once per epoch
  uint64_t record_at(uint64_t position) const;

  SamplerOptions options_;
  uint64_t epoch_ = 0;
  uint64_t position_ = 0;
  // The permutation of order_epoch_: 4 bytes a record when indices fit, else 8.
  std::vector<uint32_t> order32_;
  std::vector<uint64_t> order64_;
  uint64_t order_epoch_ = 0;
  bool order_valid_ = false;
};

// The order epoch `epoch` visits records 0..n-1 in (see above).
std::vector<uint64_t> EpochPermutation(uint64_t n, uint64_t seed, uint64_t epoch);

// Rank `rank`'s part of n evaluation records: contiguous, disjoint, covering
// 0..n-1 over all ranks; the first n mod W ranks get one record more. A
// global mean is sum over ranks of (metric sum) / sum of count(): allreduce
// both with ReduceOp::kSum (a plain average of per-rank means is wrong when
// the counts differ).
struct Shard {
  uint64_t begin = 0;
  uint64_t end = 0;  // one past the last record
  uint64_t count() const { return end - begin; }
  bool operator==(const Shard&) const = default;
};
// Throws ConfigError when world_size < 1 or rank is out of range.
Shard ShardOf(uint64_t n, int world_size, int rank);

}  // namespace ring::trial
