// DistributedSampler, EpochPermutation and ShardOf: a fixed, portable order;
// every record once per epoch over all ranks; the same number of steps on
// every rank; resuming (with the same or another world size or batch size)
// hands out exactly the records not yet seen.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "ring/trial/data_sampler.h"
#include "ring/trial/errors.h"
#include "training/portable_random.h"

namespace ring::trial {
namespace {

std::vector<DistributedSampler> Ranks(SamplerOptions options) {
  std::vector<DistributedSampler> ranks;
  for (int r = 0; r < options.world_size; ++r) {
    options.rank = r;
    ranks.emplace_back(options);
  }
  return ranks;
}

// One global step on every rank: the ranks agree on what is left before it,
// on the step's place and size, and they split it contiguously in rank order.
std::vector<uint64_t> Step(std::vector<DistributedSampler>& ranks) {
  const uint64_t left = ranks[0].steps_remaining_in_epoch();
  std::vector<uint64_t> records;
  std::vector<SamplerBatch> batches;
  for (auto& s : ranks) {
    EXPECT_EQ(s.steps_remaining_in_epoch(), left);
    batches.push_back(s.next());
    records.insert(records.end(), batches.back().indices.begin(), batches.back().indices.end());
  }
  for (const auto& b : batches) {
    EXPECT_EQ(b.epoch, batches[0].epoch);
    EXPECT_EQ(b.global_begin, batches[0].global_begin);
    EXPECT_EQ(b.global_size, records.size());
  }
  for (const auto& s : ranks) EXPECT_EQ(s.state(), ranks[0].state());
  return records;
}

// Every step of the current epoch, concatenated.
std::vector<uint64_t> RestOfEpoch(std::vector<DistributedSampler>& ranks) {
  std::vector<uint64_t> seen;
  while (ranks[0].steps_remaining_in_epoch() > 0) {
    auto step = Step(ranks);
    seen.insert(seen.end(), step.begin(), step.end());
  }
  return seen;
}

std::vector<uint64_t> Iota(uint64_t n) {
  std::vector<uint64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(SamplerTest, GeneratorsMatchTheirPublishedDefinitions) {
  detail::SplitMix64 sm(1234567);
  EXPECT_EQ(sm.next(), 6457827717110365317ull);
  EXPECT_EQ(sm.next(), 3203168211198807973ull);
  EXPECT_EQ(sm.next(), 9817491932198370423ull);
  detail::Xoshiro256StarStar x(1, 2, 3, 4);
  EXPECT_EQ(x.next(), 11520ull);
  EXPECT_EQ(x.next(), 0ull);
  EXPECT_EQ(x.next(), 1509978240ull);
  EXPECT_EQ(x.next(), 1215971899390074240ull);
}

TEST(SamplerTest, BoundedDrawsStayInRangeAndCoverIt) {
  auto rng = detail::Xoshiro256StarStar::FromSeed(9);
  std::vector<int> hits(7, 0);
  for (int i = 0; i < 7000; ++i) ++hits[rng.below(7)];
  for (int h : hits) EXPECT_GT(h, 800);
  EXPECT_EQ(rng.below(1), 0u);
  const uint64_t huge = (uint64_t{1} << 63) + 3;  // rejects almost half of the raw outputs
  for (int i = 0; i < 100; ++i) EXPECT_LT(rng.below(huge), huge);
}

// Fixed values: a change of generator, seeding or shuffle fails here.
TEST(SamplerTest, PermutationIsPinned) {
  EXPECT_EQ(EpochPermutation(10, 42, 0), (std::vector<uint64_t>{6, 7, 8, 3, 9, 4, 5, 2, 1, 0}));
  EXPECT_EQ(EpochPermutation(10, 42, 1), (std::vector<uint64_t>{0, 5, 9, 8, 1, 2, 3, 7, 4, 6}));
  const auto big = EpochPermutation(1'000'000, 7, 3);
  EXPECT_EQ(std::vector<uint64_t>(big.begin(), big.begin() + 6),
            (std::vector<uint64_t>{749307, 427457, 454192, 162894, 244837, 788847}));
}

TEST(SamplerTest, PermutationIsAPermutationThatDependsOnSeedAndEpoch) {
  for (uint64_t n : {1, 2, 3, 17, 1000}) {
    auto p = EpochPermutation(n, 5, 2);
    auto sorted = p;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, Iota(n)) << n;
    EXPECT_EQ(p, EpochPermutation(n, 5, 2));
  }
  EXPECT_NE(EpochPermutation(1000, 5, 2), EpochPermutation(1000, 5, 3));
  EXPECT_NE(EpochPermutation(1000, 5, 2), EpochPermutation(1000, 6, 2));
  EXPECT_TRUE(EpochPermutation(0, 5, 2).empty());
}

TEST(SamplerTest, StepsFollowThePermutationWhateverTheWorldSize) {
  const auto expected = EpochPermutation(50, 11, 0);
  for (int w : {1, 2, 3, 5, 8}) {
    auto ranks = Ranks({.dataset_size = 50, .world_size = w, .batch_size = 3, .seed = 11});
    EXPECT_EQ(RestOfEpoch(ranks), expected) << "world size " << w;
  }
}

TEST(SamplerTest, EveryRecordOncePerEpochAndEqualStepsOnEveryRank) {
  for (uint64_t n : {1, 2, 7, 10, 64, 101, 1000}) {
    for (int w : {1, 2, 3, 4, 7}) {
      for (uint64_t b : {1, 3, 8, 32}) {
        SCOPED_TRACE(::testing::Message() << "n=" << n << " w=" << w << " b=" << b);
        auto ranks = Ranks({.dataset_size = n, .world_size = w, .batch_size = b, .seed = n + w + b});
        const uint64_t capacity = static_cast<uint64_t>(w) * b;
        const uint64_t steps = (n + capacity - 1) / capacity;
        EXPECT_EQ(ranks[0].steps_per_epoch(), steps);
        for (int epoch = 0; epoch < 2; ++epoch) {
          EXPECT_EQ(ranks[0].steps_remaining_in_epoch(), epoch == 0 ? steps : 0);
          uint64_t taken = 0;
          std::vector<uint64_t> seen;
          for (uint64_t s = 0; s < steps; ++s) {
            std::vector<size_t> sizes;
            for (auto& r : ranks) {
              auto batch = r.next();
              EXPECT_EQ(batch.epoch, static_cast<uint64_t>(epoch));
              EXPECT_LE(batch.indices.size(), b);
              sizes.push_back(batch.indices.size());
              seen.insert(seen.end(), batch.indices.begin(), batch.indices.end());
            }
            // Full steps give b to everyone; the short one differs by at most one, larger first.
            EXPECT_TRUE(std::is_sorted(sizes.rbegin(), sizes.rend()));
            EXPECT_LE(sizes.front() - sizes.back(), 1u);
            taken += std::accumulate(sizes.begin(), sizes.end(), uint64_t{0});
          }
          EXPECT_EQ(taken, n);
          EXPECT_EQ(ranks[0].steps_remaining_in_epoch(), 0u);
          std::sort(seen.begin(), seen.end());
          EXPECT_EQ(seen, Iota(n));
        }
      }
    }
  }
}

TEST(SamplerTest, ShortLastStepIsSplitAsEvenlyAsPossible) {
  auto ranks = Ranks({.dataset_size = 10, .world_size = 4, .batch_size = 2, .seed = 1});
  const auto order = EpochPermutation(10, 1, 0);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(ranks[r].next().indices, (std::vector<uint64_t>{order[2 * r], order[2 * r + 1]}));
  }
  EXPECT_EQ(ranks[0].steps_remaining_in_epoch(), 1u);
  std::vector<std::vector<uint64_t>> tail;
  for (auto& s : ranks) tail.push_back(s.next().indices);
  EXPECT_EQ(tail, (std::vector<std::vector<uint64_t>>{{order[8]}, {order[9]}, {}, {}}));

  auto three = Ranks({.dataset_size = 11, .world_size = 3, .batch_size = 3, .seed = 1});
  Step(three);
  std::vector<size_t> sizes;
  for (auto& s : three) sizes.push_back(s.next().indices.size());
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 1, 0}));
  for (auto& s : three) sizes.push_back(s.next().indices.size());  // next epoch: full again
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 1, 0, 3, 3, 3}));
}

TEST(SamplerTest, DropLastSkipsTheShortStep) {
  auto ranks = Ranks({.dataset_size = 10, .world_size = 3, .batch_size = 2, .seed = 4, .drop_last = true});
  EXPECT_EQ(ranks[0].steps_per_epoch(), 1u);
  const auto order = EpochPermutation(10, 4, 0);
  EXPECT_EQ(Step(ranks), std::vector<uint64_t>(order.begin(), order.begin() + 6));
  EXPECT_EQ(ranks[0].steps_remaining_in_epoch(), 0u);
  const auto next = EpochPermutation(10, 4, 1);
  EXPECT_EQ(Step(ranks), std::vector<uint64_t>(next.begin(), next.begin() + 6));
  EXPECT_THROW(DistributedSampler({.dataset_size = 5, .world_size = 3, .batch_size = 2, .drop_last = true}),
               ConfigError);
}

TEST(SamplerTest, EpochsRollOverAndReshuffle) {
  auto ranks = Ranks({.dataset_size = 40, .world_size = 2, .batch_size = 5, .seed = 3});
  const auto first = RestOfEpoch(ranks);
  EXPECT_EQ(first, EpochPermutation(40, 3, 0));
  EXPECT_EQ(ranks[0].epoch(), 0u);  // at the end of epoch 0 until the next step is asked for
  EXPECT_EQ(ranks[0].steps_remaining_in_epoch(), 0u);
  auto second = Step(ranks);
  EXPECT_EQ(ranks[0].epoch(), 1u);
  EXPECT_EQ(ranks[0].steps_remaining_in_epoch(), 3u);
  const auto rest = RestOfEpoch(ranks);
  second.insert(second.end(), rest.begin(), rest.end());
  EXPECT_EQ(second, EpochPermutation(40, 3, 1));
  EXPECT_NE(second, first);
}

TEST(SamplerTest, WithoutShuffleEveryEpochIsInOrder) {
  auto ranks = Ranks({.dataset_size = 9, .world_size = 2, .batch_size = 2, .seed = 3, .shuffle = false});
  EXPECT_EQ(RestOfEpoch(ranks), Iota(9));
  Step(ranks);
  EXPECT_EQ(ranks[0].epoch(), 1u);
}

struct Resize {
  int from_world;
  uint64_t from_batch;
  int to_world;
  uint64_t to_batch;
};

// Checkpoint after every step, restore with the same or other ranks and
// batch size: the rest of the epoch is exactly the unseen records, in order.
TEST(SamplerTest, ResumingAtEveryStepHandsOutExactlyTheUnseenRecords) {
  const uint64_t n = 103;
  for (const Resize& c :
       {Resize{2, 4, 2, 4}, Resize{2, 4, 3, 4}, Resize{4, 5, 1, 5}, Resize{1, 7, 4, 3}, Resize{3, 2, 2, 9}}) {
    for (bool drop_last : {false, true}) {
      SamplerOptions from{.dataset_size = n,
                          .world_size = c.from_world,
                          .batch_size = c.from_batch,
                          .seed = 77,
                          .drop_last = drop_last};
      SamplerOptions to = from;
      to.world_size = c.to_world;
      to.batch_size = c.to_batch;
      const auto order = EpochPermutation(n, 77, 1);
      const uint64_t steps = Ranks(from)[0].steps_per_epoch();
      for (uint64_t k = 0; k <= steps; ++k) {
        SCOPED_TRACE(::testing::Message()
                     << c.from_world << "x" << c.from_batch << " -> " << c.to_world << "x" << c.to_batch
                     << " drop_last=" << drop_last << " after step " << k);
        auto before = Ranks(from);
        for (auto& s : before) s.restore({.epoch = 1, .position = 0, .dataset_size = n, .seed = 77});
        std::vector<uint64_t> seen;
        for (uint64_t s = 0; s < k; ++s) {
          auto step = Step(before);
          seen.insert(seen.end(), step.begin(), step.end());
        }
        const auto saved =
            SamplerState::FromJson(nlohmann::json::parse(before[1 % c.from_world].state().to_json().dump()));
        EXPECT_EQ(saved, before[0].state());
        auto after = Ranks(to);
        for (auto& s : after) s.restore(saved);
        auto rest = RestOfEpoch(after);
        EXPECT_EQ(std::vector<uint64_t>(order.begin(), order.begin() + seen.size()), seen);
        EXPECT_EQ(
            std::vector<uint64_t>(order.begin() + seen.size(), order.begin() + seen.size() + rest.size()),
            rest);
        if (!drop_last) {
          EXPECT_EQ(seen.size() + rest.size(), n);
        } else {  // only the short step at the end of the epoch is dropped
          EXPECT_LT(n - seen.size() - rest.size(), static_cast<uint64_t>(c.to_world) * c.to_batch);
        }
        Step(after);
        EXPECT_EQ(after[0].epoch(), 2u);
      }
    }
  }
}

TEST(SamplerTest, RejectsBadOptionsAndForeignStates) {
  EXPECT_THROW(DistributedSampler({.dataset_size = 0}), ConfigError);
  EXPECT_THROW(DistributedSampler({.dataset_size = 5, .world_size = 0}), ConfigError);
  EXPECT_THROW(DistributedSampler({.dataset_size = 5, .world_size = 2, .rank = 2}), ConfigError);
  EXPECT_THROW(DistributedSampler({.dataset_size = 5, .rank = -1}), ConfigError);
  EXPECT_THROW(DistributedSampler({.dataset_size = 5, .batch_size = 0}), ConfigError);

  DistributedSampler s({.dataset_size = 5, .seed = 9});
  EXPECT_THROW(s.restore({.epoch = 0, .position = 0, .dataset_size = 6, .seed = 9}), ConfigError);
  EXPECT_THROW(s.restore({.epoch = 0, .position = 0, .dataset_size = 5, .seed = 8}), ConfigError);
  EXPECT_THROW(s.restore({.epoch = 0, .position = 6, .dataset_size = 5, .seed = 9}), ConfigError);
  s.restore({.epoch = 4, .position = 5, .dataset_size = 5, .seed = 9});
  EXPECT_EQ(s.steps_remaining_in_epoch(), 0u);

  try {
    SamplerState::FromJson({{"epoch", 1}, {"position", -2}, {"dataset_size", 5}, {"seed", 9}});
    FAIL() << "a negative position was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("\"position\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(SamplerState::FromJson({{"epoch", 1}, {"position", 0}, {"seed", 9}}), ConfigError);
  EXPECT_THROW(SamplerState::FromJson(nlohmann::json::array()), ConfigError);
  EXPECT_THROW(SamplerState::FromJson({{"epoch", "1"}, {"position", 0}, {"dataset_size", 5}, {"seed", 9}}),
               ConfigError);
}

TEST(SamplerTest, ShardsAreDisjointContiguousAndComplete) {
  for (uint64_t n : {0, 1, 5, 10, 1797}) {
    for (int w : {1, 2, 3, 4, 8}) {
      uint64_t next = 0;
      for (int r = 0; r < w; ++r) {
        Shard shard = ShardOf(n, w, r);
        EXPECT_EQ(shard.begin, next);
        EXPECT_TRUE(shard.count() == n / w || shard.count() == n / w + 1);
        EXPECT_EQ(shard.count(), n / w + (static_cast<uint64_t>(r) < n % w ? 1 : 0));
        next = shard.end;
      }
      EXPECT_EQ(next, n);
    }
  }
  EXPECT_EQ(ShardOf(10, 3, 0), (Shard{0, 4}));
  EXPECT_EQ(ShardOf(10, 3, 2), (Shard{7, 10}));
  EXPECT_THROW(ShardOf(10, 0, 0), ConfigError);
  EXPECT_THROW(ShardOf(10, 3, 3), ConfigError);
}

}  // namespace
}  // namespace ring::trial
