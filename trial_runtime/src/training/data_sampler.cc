#include "ring/trial/data_sampler.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "ring/trial/errors.h"
#include "training/portable_random.h"

namespace ring::trial {
namespace {

// Fisher-Yates from the last position down, one bounded draw per position.
template <typename Index>
void Shuffle(std::vector<Index>& order, uint64_t seed, uint64_t epoch) {
  auto rng = detail::Xoshiro256StarStar::FromSeed(detail::Mix64(seed) ^ epoch);
  for (uint64_t i = order.size(); i > 1; --i) {
    const uint64_t j = rng.below(i);
    std::swap(order[i - 1], order[j]);
  }
}

// W * B, saturated (a step never holds more than every record anyway).
uint64_t StepCapacity(const SamplerOptions& o) {
  const auto w = static_cast<uint64_t>(o.world_size);
  if (o.batch_size > std::numeric_limits<uint64_t>::max() / w) return std::numeric_limits<uint64_t>::max();
  return w * o.batch_size;
}

uint64_t StepsIn(uint64_t records, const SamplerOptions& o) {
  const uint64_t capacity = StepCapacity(o);
  if (o.drop_last) return records / capacity;
  return records == 0 ? 0 : (records - 1) / capacity + 1;
}

uint64_t UnsignedField(const nlohmann::json& json, const char* name) {
  const auto it = json.find(name);
  if (it == json.end()) throw ConfigError(std::string("sampler state has no \"") + name + "\"");
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer() && it->get<int64_t>() >= 0) return static_cast<uint64_t>(it->get<int64_t>());
  throw ConfigError(std::string("sampler state field \"") + name + "\" must be a non-negative integer, got " +
                    it->dump());
}

}  // namespace

nlohmann::json SamplerState::to_json() const {
  return {{"epoch", epoch}, {"position", position}, {"dataset_size", dataset_size}, {"seed", seed}};
}

SamplerState SamplerState::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) throw ConfigError("sampler state must be a JSON object, got " + json.dump());
  SamplerState state;
  state.epoch = UnsignedField(json, "epoch");
  state.position = UnsignedField(json, "position");
  state.dataset_size = UnsignedField(json, "dataset_size");
  state.seed = UnsignedField(json, "seed");
  return state;
}

DistributedSampler::DistributedSampler(const SamplerOptions& options) : options_(options) {
  if (options.dataset_size == 0) throw ConfigError("sampler dataset_size must be at least 1");
  if (options.world_size < 1)
    throw ConfigError("sampler world_size must be at least 1, got " + std::to_string(options.world_size));
  if (options.rank < 0 || options.rank >= options.world_size)
    throw ConfigError("sampler rank " + std::to_string(options.rank) + " is not in [0, " +
                      std::to_string(options.world_size) + ")");
  if (options.batch_size == 0) throw ConfigError("sampler batch_size must be at least 1");
  if (steps_per_epoch() == 0)
    throw ConfigError("sampler drop_last leaves no step: world_size " + std::to_string(options.world_size) +
                      " x batch_size " + std::to_string(options.batch_size) + " exceeds dataset_size " +
                      std::to_string(options.dataset_size));
}

uint64_t DistributedSampler::steps_per_epoch() const {
  return StepsIn(options_.dataset_size, options_);
}

uint64_t DistributedSampler::steps_remaining_in_epoch() const {
  return StepsIn(options_.dataset_size - position_, options_);
}

SamplerBatch DistributedSampler::next() {
  if (steps_remaining_in_epoch() == 0) {
    ++epoch_;
    position_ = 0;
  }
  shuffle_for_epoch();
  const uint64_t take = std::min(StepCapacity(options_), options_.dataset_size - position_);
  const auto world = static_cast<uint64_t>(options_.world_size);
  const auto rank = static_cast<uint64_t>(options_.rank);
  const uint64_t base = take / world, extra = take % world;
  const uint64_t begin = rank * base + std::min(rank, extra);
  const uint64_t count = base + (rank < extra ? 1 : 0);

  SamplerBatch batch;
  batch.epoch = epoch_;
  batch.global_begin = position_;
  batch.global_size = take;
  batch.indices.reserve(count);
  for (uint64_t i = 0; i < count; ++i) batch.indices.push_back(record_at(position_ + begin + i));
  position_ += take;
  return batch;
}

SamplerState DistributedSampler::state() const {
  return {
      .epoch = epoch_, .position = position_, .dataset_size = options_.dataset_size, .seed = options_.seed};
}

void DistributedSampler::restore(const SamplerState& state) {
  if (state.dataset_size != options_.dataset_size)
    throw ConfigError("sampler state is for dataset_size " + std::to_string(state.dataset_size) +
                      ", this sampler has " + std::to_string(options_.dataset_size));
  if (options_.shuffle && state.seed != options_.seed)
    throw ConfigError("sampler state is for seed " + std::to_string(state.seed) + ", this sampler has " +
                      std::to_string(options_.seed));
  if (state.position > state.dataset_size)
    throw ConfigError("sampler state position " + std::to_string(state.position) + " exceeds dataset_size " +
                      std::to_string(state.dataset_size));
  epoch_ = state.epoch;
  position_ = state.position;
}

void DistributedSampler::shuffle_for_epoch() {
  if (order_valid_ && order_epoch_ == epoch_) return;
  const uint64_t n = options_.dataset_size;
  auto fill = [&](auto& order) {
    order.resize(n);
    std::iota(order.begin(), order.end(), 0);
    if (options_.shuffle) Shuffle(order, options_.seed, epoch_);
  };
  if (n - 1 <= std::numeric_limits<uint32_t>::max())
    fill(order32_);
  else
    fill(order64_);
  order_epoch_ = epoch_;
  order_valid_ = true;
}

uint64_t DistributedSampler::record_at(uint64_t position) const {
  return order64_.empty() ? order32_[position] : order64_[position];
}

std::vector<uint64_t> EpochPermutation(uint64_t n, uint64_t seed, uint64_t epoch) {
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  Shuffle(order, seed, epoch);
  return order;
}

Shard ShardOf(uint64_t n, int world_size, int rank) {
  if (world_size < 1)
    throw ConfigError("shard world_size must be at least 1, got " + std::to_string(world_size));
  if (rank < 0 || rank >= world_size)
    throw ConfigError("shard rank " + std::to_string(rank) + " is not in [0, " + std::to_string(world_size) +
                      ")");
  const auto w = static_cast<uint64_t>(world_size), r = static_cast<uint64_t>(rank);
  const uint64_t base = n / w, extra = n % w;
  const uint64_t begin = r * base + std::min(r, extra);
  return {.begin = begin, .end = begin + base + (r < extra ? 1 : 0)};
}

}  // namespace ring::trial
