// PriorityReducer over real Gloo groups of ranks as threads: pieces cut as
// documented, every gradient averaged whatever order and moment each rank
// marks it in, reuse over steps, and misuse named.
#include "ring/trial/priority_reducer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "ring/trial/errors.h"
#include "tests/unit/distributed/distributed_thread_ranks.h"

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
  return static_cast<float>((rank + 1) * static_cast<int>(j % 5 + 1) + step) + 0.25f * static_cast<float>(j % 3);
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
    reducer.wait(0);
    reducer.release(0);
    EXPECT_THROW(reducer.release(0), ReducerUsageError);
    reducer.mark_ready(0);
  });
}

}  // namespace
}  // namespace ring::trial
