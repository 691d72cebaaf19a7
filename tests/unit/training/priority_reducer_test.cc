// PriorityReducer over real Gloo groups of ranks as threads: pieces cut as
// documented, every gradient averaged whatever order and moment each rank
// marks it in, reuse over steps, and misuse named.
#include "ring/trial/priority_reducer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "ring/trial/errors.h"
#include "tests/unit/distributed/distributed_thread_ranks.h"
#include "training/compression.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;

TEST(PlanPiecesTest, SplitsLargeGradientsAndGroupsSmallOnes) {
  // 1 KiB pieces hold 256 floats.
  const auto pieces = detail::PlanPieces({10, 600, 5, 5, 200, 300}, 1024);
  ASSERT_EQ(pieces.size(), 7u);
  const std::vector<std::pair<size_t, size_t>> params = {{0, 0}, {1, 1}, {1, 1}, {1, 1},
                                                         {2, 4}, {5, 5}, {5, 5}};
  const std::vector<size_t> elements = {10, 200, 200, 200, 210, 150, 150};
  size_t offset = 0;
  for (size_t p = 0; p < pieces.size(); ++p) {
    SCOPED_TRACE("piece " + std::to_string(p));
    EXPECT_EQ(pieces[p].offset, offset);
    EXPECT_EQ(pieces[p].first, params[p].first);
    EXPECT_EQ(pieces[p].last, params[p].second);
    EXPECT_EQ(pieces[p].elements, elements[p]);
    offset += pieces[p].elements;
  }
  EXPECT_EQ(offset, 1120u);
}

// Rank r's gradient value: small integers and quarters, so sums are exact.
float Value(int rank, int step, size_t j) {
  return static_cast<float>((rank + 1) * static_cast<int>(j % 5 + 1) + step) +
         0.25f * static_cast<float>(j % 3);
}

TEST(PriorityReducerTest, AveragesEveryGradientWhateverOrderRanksMarkThemIn) {
  const std::vector<size_t> sizes = {300, 7, 1000, 64, 1, 513};
  const size_t total = std::accumulate(sizes.begin(), sizes.end(), size_t{0});
  const int world = 3;
  testing::RunGroup(world, {.backend = "gloo", .rendezvous_timeout = 30s}, [&](ProcessGroup& group) {
    const int r = group.rank();
    std::vector<float> flat(total);
    PriorityReducer reducer(group, flat, sizes, {.piece_bytes = 512, .timeout = 30s});
    EXPECT_GT(reducer.pieces().size(), sizes.size());
    std::mt19937 random(static_cast<unsigned>(r) + 17);
    for (int step = 0; step < 4; ++step) {
      for (size_t j = 0; j < total; ++j) flat[j] = Value(r, step, j);
      // Each rank marks in its own order, with pauses: the ranks must agree anyway.
      std::vector<size_t> order(sizes.size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), random);
      for (size_t i : order) {
        if (random() % 3 == 0) std::this_thread::sleep_for(2ms);
        reducer.mark_ready(i);
      }
      for (size_t i = 0; i < sizes.size(); ++i) reducer.wait(i);
      for (size_t j = 0; j < total; ++j) {
        float sum = 0;
        for (int k = 0; k < world; ++k) sum += Value(k, step, j);
        ASSERT_EQ(flat[j], sum / world) << "element " << j << " of step " << step;
      }
      for (size_t i = 0; i < sizes.size(); ++i) reducer.release(i);
    }
    EXPECT_EQ(reducer.totals().pieces, 4 * reducer.pieces().size());
  });
}

TEST(PriorityReducerTest, OneRankNeedsNoThreadAndNoCommunication) {
  testing::RunGroup(1, {.backend = "auto"}, [&](ProcessGroup& group) {
    std::vector<float> flat(10, 3.0f);
    PriorityReducer reducer(group, flat, {4, 6}, {.piece_bytes = 8});
    reducer.mark_ready(1);
    reducer.mark_ready(0);
    reducer.wait(0);
    reducer.wait(1);
    EXPECT_EQ(flat[9], 3.0f);
  });
}

TEST(PriorityReducerTest, MisuseIsNamed) {
  testing::RunGroup(1, {.backend = "auto"}, [&](ProcessGroup& group) {
    std::vector<float> flat(10);
    EXPECT_THROW(PriorityReducer(group, flat, {4, 5}), ReducerUsageError);
    EXPECT_THROW(PriorityReducer(group, flat, {10, 0}), ReducerUsageError);
    PriorityReducer reducer(group, flat, {4, 6});
    EXPECT_THROW(reducer.wait(0), ReducerUsageError);
    EXPECT_THROW(reducer.mark_ready(2), ReducerUsageError);
    reducer.mark_ready(0);
    EXPECT_THROW(reducer.mark_ready(0), ReducerUsageError);
    EXPECT_THROW(reducer.wait(0), ReducerUsageError);  // parameter 1 shares its piece
    reducer.mark_ready(1);
    reducer.wait(0);
    reducer.release(0);
    EXPECT_THROW(reducer.release(0), ReducerUsageError);
    reducer.mark_ready(0);
  });
}

TEST(CompressionTest, RoundsToNearestEvenLikeTheHardware) {
  using detail::FromBFloat16;
  using detail::FromHalf;
  using detail::ToBFloat16;
  using detail::ToHalf;
  EXPECT_EQ(ToHalf(1.0f), 0x3c00);
  EXPECT_EQ(ToHalf(-2.5f), 0xc100);
  EXPECT_EQ(ToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(ToHalf(65520.0f), 0x7c00);         // rounds to infinity
  EXPECT_EQ(ToHalf(1.0f + 0x1p-11f), 0x3c00);  // halfway: to even
  EXPECT_EQ(ToHalf(1.0f + 0x3p-11f), 0x3c02);  // halfway: to even, up
  EXPECT_EQ(ToHalf(0x1p-24f), 0x0001);         // smallest subnormal
  EXPECT_EQ(ToHalf(0x1p-26f), 0x0000);
  EXPECT_EQ(FromHalf(0x0001), 0x1p-24f);
  EXPECT_EQ(FromHalf(0x7bff), 65504.0f);
  EXPECT_EQ(ToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(ToBFloat16(1.0f + 0x1p-8f), 0x3f80);  // halfway: to even
  EXPECT_EQ(ToBFloat16(1.0f + 0x3p-8f), 0x3f82);
  EXPECT_EQ(FromBFloat16(0xc040), -3.0f);
  // The vector path (8 at a time) and the scalar one agree on every value.
  std::vector<float> in, residual;
  for (int k = -3000; k < 3000; ++k)
    in.push_back(static_cast<float>(k) * 0.0137f + 1e-6f * static_cast<float>(k % 7));
  residual.assign(in.size(), 0.0f);
  std::vector<uint16_t> out(in.size());
  detail::Compress(GradientCompression::kFloat16, in.data(), residual.data(), out.data(), in.size());
  for (size_t j = 0; j < in.size(); ++j) {
    ASSERT_EQ(out[j], ToHalf(in[j])) << in[j];
    ASSERT_EQ(residual[j], in[j] - FromHalf(out[j])) << in[j];
  }
}

TEST(PriorityReducerTest, CompressedAveragesCarryTheirRoundingErrorToTheNextStep) {
  const std::vector<size_t> sizes = {1001, 77};
  const size_t total = 1078;
  for (auto kind : {GradientCompression::kFloat16, GradientCompression::kBFloat16}) {
    testing::RunGroup(2, {.backend = "gloo", .rendezvous_timeout = 30s}, [&](ProcessGroup& group) {
      const int r = group.rank();
      std::vector<float> flat(total);
      PriorityReducer reducer(group, flat, sizes, {.piece_bytes = 1024, .timeout = 30s, .compression = kind});
      // The same gradient every step: the averages' running sum must track
      // the exact one within one rounding, not drift by a rounding a step.
      std::vector<double> sum(total, 0.0);
      const int steps = 50;
      for (int step = 0; step < steps; ++step) {
        for (size_t j = 0; j < total; ++j)
          flat[j] = 0.1f * static_cast<float>(r + 1) + 1e-4f * static_cast<float>(j);
        reducer.mark_ready(1);
        reducer.mark_ready(0);
        for (size_t i = 0; i < 2; ++i) reducer.wait(i);
        for (size_t j = 0; j < total; ++j) sum[j] += flat[j];
        for (size_t i = 0; i < 2; ++i) reducer.release(i);
      }
      double worst = 0;
      for (size_t j = 0; j < total; ++j) {
        const double exact = steps * (0.15 + 1e-4 * static_cast<double>(j));
        worst = std::max(worst, std::abs(sum[j] - exact) / exact);
      }
      // What rounding lost stays in the residuals: at most one rounding of
      // each rank's value (2^-12 of it in float16, 2^-9 in bfloat16) over
      // the whole run, so about 2 / 50 of that of the sum. Without error
      // feedback the same rounding would repeat every step: 2^-12 or 2^-9
      // of the sum, 12 and 20 times these bounds.
      const bool half = kind == GradientCompression::kFloat16;
      EXPECT_LT(worst, half ? 2e-5 : 1e-4) << (half ? "float16" : "bfloat16");
    });
  }
}

}  // namespace
}  // namespace ring::trial
