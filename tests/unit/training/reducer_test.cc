// GradientReducer and BroadcastParameters over in-process ranks
// (FakeThreadGroup): averages for every bucket layout, buckets reduced while
// backward still runs, reuse over iterations, failures surfacing as
// CollectiveError, and misuse named.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ring/trial/errors.h"
#include "ring/trial/gradient_reducer.h"
#include "tests/unit/training/training_fake_group.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;
using ring::testing::FakeThreadGroup;
using ring::testing::FakeWorld;
using ring::testing::RunRanks;

// Gradient buffers of one rank, either one vector each or laid end to end
// in one allocation (so that buckets can be reduced in place).
struct Grads {
  Grads(const std::vector<size_t>& sizes, bool flat) {
    if (flat) {
      storage.emplace_back(std::accumulate(sizes.begin(), sizes.end(), size_t{0}));
      size_t at = 0;
      for (size_t n : sizes) {
        spans.emplace_back(storage[0].data() + at, n);
        at += n;
      }
    } else {
      for (size_t n : sizes) storage.emplace_back(n);
      for (auto& v : storage) spans.emplace_back(v);
    }
  }
  std::vector<std::vector<float>> storage;
  std::vector<std::span<float>> spans;
};

// Rank r's gradient value: integers and quarters, so sums are exact.
float Value(int rank, int iteration, size_t param, size_t j) {
  return static_cast<float>((rank + 1) * (static_cast<int>(param % 7) + 1) + iteration) +
         0.25f * static_cast<float>(j % 9);
}

float Average(int world_size, int iteration, size_t param, size_t j) {
  float sum = 0;
  for (int r = 0; r < world_size; ++r) sum += Value(r, iteration, param, j);
  return sum / static_cast<float>(world_size);
}

void Fill(Grads& g, int rank, int iteration) {
  for (size_t i = 0; i < g.spans.size(); ++i)
    for (size_t j = 0; j < g.spans[i].size(); ++j) g.spans[i][j] = Value(rank, iteration, i, j);
}

void ExpectAveraged(const Grads& g, int world_size, int iteration) {
  for (size_t i = 0; i < g.spans.size(); ++i)
    for (size_t j = 0; j < g.spans[i].size(); ++j)
      ASSERT_EQ(g.spans[i][j], Average(world_size, iteration, i, j)) << "parameter " << i << " element " << j;
}

std::string Message(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

ReducerOptions Options(size_t bucket_bytes) {
  return {.bucket_bytes = bucket_bytes, .timeout = 20s};
}

TEST(ReducerTest, BucketsRunBackwardsFromTheLastParameter) {
  auto world = std::make_shared<FakeWorld>(1);
  FakeThreadGroup group(world, 0);
  Grads g({10, 20, 30, 40}, false);
  auto ranges = [&](size_t bytes) {
    std::vector<std::pair<size_t, size_t>> out;
    GradientReducer reducer(group, g.spans, Options(bytes));
    for (const auto& b : reducer.buckets()) out.emplace_back(b.first, b.last);
    return out;
  };
  using Ranges = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(ranges(100), (Ranges{{3, 3}, {2, 2}, {0, 1}}));  // 160 B, 120 B, 80 + 40 B
  EXPECT_EQ(ranges(200), (Ranges{{2, 3}, {0, 1}}));
  EXPECT_EQ(ranges(1), (Ranges{{3, 3}, {2, 2}, {1, 1}, {0, 0}}));
  EXPECT_EQ(ranges(size_t{1} << 30), (Ranges{{0, 3}}));

  GradientReducer reducer(group, g.spans, Options(200));
  EXPECT_EQ(reducer.buckets()[0].elements, 70u);
  EXPECT_FALSE(reducer.buckets()[0].in_place);
  Grads flat({10, 20, 30, 40}, true);
  GradientReducer in_place(group, flat.spans, Options(200));
  EXPECT_TRUE(in_place.buckets()[0].in_place);
  EXPECT_TRUE(in_place.buckets()[1].in_place);
  EXPECT_EQ(ReducerOptions{}.bucket_bytes, size_t{25} << 20);
}

TEST(ReducerTest, TheFirstBucketClosesEarlySoCommunicationStartsEarly) {
  auto world = std::make_shared<FakeWorld>(1);
  FakeThreadGroup group(world, 0);
  Grads g({10, 20, 30, 40}, false);  // 40, 80, 120, 160 bytes
  auto ranges = [&](size_t first, size_t bytes) {
    std::vector<std::pair<size_t, size_t>> out;
    GradientReducer reducer(group, g.spans,
                            {.bucket_bytes = bytes, .first_bucket_bytes = first, .timeout = 20s});
    for (const auto& b : reducer.buckets()) out.emplace_back(b.first, b.last);
    return out;
  };
  using Ranges = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(ranges(100, 1000), (Ranges{{3, 3}, {0, 2}}));  // 160 B, then the rest
  EXPECT_EQ(ranges(200, 1000), (Ranges{{2, 3}, {0, 1}}));
  EXPECT_EQ(ranges(1000, 100), (Ranges{{3, 3}, {2, 2}, {0, 1}}));  // never above bucket_bytes
  EXPECT_EQ(ranges(0, 1000), (Ranges{{3, 3}, {0, 2}}));            // at least one parameter
  // The defaults are DDP's: a model of 24 MiB in 1 MiB + the rest, not in one bucket.
  EXPECT_EQ(ReducerOptions{}.first_bucket_bytes, size_t{1} << 20);
  std::vector<float> big(6 << 20), small(1 << 10), last(1 << 18);  // 24 MiB, 4 KiB, 1 MiB
  GradientReducer reducer(group, {std::span(big), std::span(small), std::span(last)});
  ASSERT_EQ(reducer.buckets().size(), 2u);
  EXPECT_EQ(reducer.buckets()[0].first, 2u);
  EXPECT_EQ(reducer.buckets()[1].first, 0u);
  EXPECT_EQ(reducer.buckets()[1].last, 1u);
}

struct Layout {
  size_t bucket_bytes;
  bool flat_on_rank0;
  bool flat_elsewhere;
};

TEST(ReducerTest, AveragesEveryParameterForManyBucketSizesAndLayouts) {
  std::vector<size_t> sizes;
  for (size_t i = 0; i < 23; ++i) sizes.push_back(1 + (i * 37) % 300);
  sizes.push_back(5000);
  for (const Layout& layout : {Layout{1, false, false}, Layout{64, false, false}, Layout{4096, true, true},
                               Layout{4096, true, false}, Layout{size_t{1} << 30, false, true},
                               Layout{size_t{1} << 30, false, false}}) {
    SCOPED_TRACE(::testing::Message() << "bucket_bytes " << layout.bucket_bytes << " flat "
                                      << layout.flat_on_rank0 << "/" << layout.flat_elsewhere);
    auto world = std::make_shared<FakeWorld>(3);
    RunRanks(world, [&](int rank, ProcessGroup& group) {
      Grads g(sizes, rank == 0 ? layout.flat_on_rank0 : layout.flat_elsewhere);
      GradientReducer reducer(group, g.spans, Options(layout.bucket_bytes));
      const size_t expected_buckets = layout.bucket_bytes == 1                 ? sizes.size()
                                      : layout.bucket_bytes == size_t{1} << 30 ? 1
                                                                               : reducer.buckets().size();
      EXPECT_EQ(reducer.buckets().size(), expected_buckets);
      EXPECT_GT(reducer.buckets().size(), layout.bucket_bytes == 4096 ? 2u : 0u);
      // Each rank marks in its own order: the reducer still reduces buckets in bucket order.
      std::vector<size_t> order(sizes.size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), std::mt19937(rank));
      Fill(g, rank, 0);
      for (size_t i : order) reducer.mark_ready(i);
      reducer.wait();
      ExpectAveraged(g, 3, 0);
      EXPECT_EQ(reducer.last_iteration().iterations, 1u);
    });
  }
}

TEST(ReducerTest, ReducesBucketsWhileLaterGradientsAreNotReady) {
  auto world = std::make_shared<FakeWorld>(2);
  world->set_delay(40ms);
  RunRanks(world, [&](int rank, ProcessGroup& group) {
    Grads g({5, 6, 7, 8, 9, 10}, false);  // one bucket each, told apart by their sizes
    GradientReducer reducer(group, g.spans, Options(1));
    const std::string me = "r" + std::to_string(rank) + " ";
    Fill(g, rank, 0);
    for (size_t i : {5, 4, 3, 2, 1}) {
      world->log(me + "ready " + std::to_string(i));
      reducer.mark_ready(i);
    }
    // Buckets 0..4 complete while parameter 0 is still "in backward".
    EXPECT_TRUE(world->wait_for_event(me + "allreduce end 6", 20s));
    world->log(me + "ready 0");
    reducer.mark_ready(0);
    reducer.wait();
    ExpectAveraged(g, 2, 0);
    const auto overlapped = reducer.last_iteration();
    EXPECT_GE(overlapped.reduce_time, 6 * 40ms);
    EXPECT_LT(overlapped.wait_time, overlapped.reduce_time / 2);

    // Everything ready at once: nothing is hidden, wait() sees the whole reduction.
    Fill(g, rank, 1);
    for (size_t i : {5, 4, 3, 2, 1, 0}) reducer.mark_ready(i);
    reducer.wait();
    ExpectAveraged(g, 2, 1);
    const auto serial = reducer.last_iteration();
    EXPECT_GE(serial.wait_time, serial.reduce_time / 2);
    EXPECT_EQ(reducer.totals().iterations, 2u);
    EXPECT_EQ(reducer.totals().wait_time, overlapped.wait_time + serial.wait_time);
    EXPECT_EQ(reducer.totals().copy_time, overlapped.copy_time + serial.copy_time);
  });
  const auto events = world->events();
  auto at = [&](const std::string& e) { return std::find(events.begin(), events.end(), e) - events.begin(); };
  for (std::string r : {"r0 ", "r1 "}) {
    ASSERT_LT(at(r + "ready 0"), static_cast<long>(events.size()));
    for (int count = 6; count <= 10; ++count)  // buckets 0..4 reduced before parameter 0 was ready
      EXPECT_LT(at(r + "allreduce end " + std::to_string(count)), at(r + "ready 0")) << r << count;
    EXPECT_GT(at(r + "allreduce begin 5"), at(r + "ready 0"));
  }
}

TEST(ReducerTest, ReducesInBucketOrderWhenALaterBucketIsReadyFirst) {
  auto world = std::make_shared<FakeWorld>(2);
  RunRanks(world, [&](int rank, ProcessGroup& group) {
    Grads g({5, 6, 7}, false);
    GradientReducer reducer(group, g.spans, Options(1));  // buckets: 7, 6, 5 floats
    Fill(g, rank, 0);
    reducer.mark_ready(0);  // bucket 2 complete, bucket 0 not yet
    reducer.mark_ready(1);
    std::this_thread::sleep_for(50ms);
    reducer.mark_ready(2);
    reducer.wait();
    ExpectAveraged(g, 2, 0);
  });
  std::vector<std::string> r0;
  for (const auto& e : world->events())
    if (e.rfind("r0 allreduce begin", 0) == 0) r0.push_back(e);
  EXPECT_EQ(
      r0, (std::vector<std::string>{"r0 allreduce begin 7", "r0 allreduce begin 6", "r0 allreduce begin 5"}));
}

TEST(ReducerTest, ReusesTheSameBucketsOverManyIterations) {
  auto world = std::make_shared<FakeWorld>(3);
  RunRanks(world, [&](int rank, ProcessGroup& group) {
    Grads g({100, 3, 250, 17, 64}, rank == 1);
    GradientReducer reducer(group, g.spans, Options(500));
    for (int iteration = 0; iteration < 6; ++iteration) {
      Fill(g, rank, iteration);
      for (size_t i = g.spans.size(); i-- > 0;) reducer.mark_ready(i);
      reducer.wait();
      ExpectAveraged(g, 3, iteration);
    }
    EXPECT_EQ(reducer.totals().iterations, 6u);
  });
}

TEST(ReducerTest, AllreduceFailureSurfacesOnEveryRank) {
  auto world = std::make_shared<FakeWorld>(2);
  world->fail_allreduce(1, 1);  // rank 1's second bucket of the first iteration
  RunRanks(world, [&](int rank, ProcessGroup& group) {
    Grads g({5, 6, 7}, false);
    GradientReducer reducer(group, g.spans, Options(1));
    try {
      // Rank 1's bucket 1 may fail before its last mark: that mark then
      // reports the failure instead of wait().
      for (size_t i : {2, 1, 0}) reducer.mark_ready(i);
      reducer.wait();
      ADD_FAILURE() << "rank " << rank << ": wait() did not throw";
    } catch (const CollectiveError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("bucket 1 (parameters 1..1, 6 floats)"), std::string::npos) << what;
      EXPECT_NE(what.find("injected failure"), std::string::npos) << what;
    }
    EXPECT_THROW(reducer.mark_ready(0), CollectiveError);
    EXPECT_THROW(reducer.wait(), CollectiveError);
  });
}

TEST(ReducerTest, CollectiveTimeoutSurfacesAsCollectiveError) {
  auto world = std::make_shared<FakeWorld>(2);
  RunRanks(world, [&](int rank, ProcessGroup& group) {
    Grads g({4}, false);
    GradientReducer reducer(group, g.spans, {.bucket_bytes = 1, .timeout = 100ms});
    if (rank == 1) return;  // never joins the collective
    reducer.mark_ready(0);
    EXPECT_THROW(reducer.wait(), CollectiveError);
  });
}

TEST(ReducerTest, MisuseIsNamedAndChangesNothing) {
  auto world = std::make_shared<FakeWorld>(2);
  RunRanks(world, [&](int rank, ProcessGroup& group) {
    Grads g({5, 6, 7}, false);
    GradientReducer reducer(group, g.spans, Options(1));
    Fill(g, rank, 0);
    EXPECT_EQ(Message([&] { reducer.wait(); }),
              "gradient reducer: wait() before parameter 0 was marked ready (0 of 3 are)");
    reducer.mark_ready(2);
    EXPECT_THROW(reducer.mark_ready(2), ReducerUsageError);
    EXPECT_EQ(Message([&] { reducer.mark_ready(2); }),
              "gradient reducer: parameter 2 was already marked ready in this iteration (call wait() before "
              "marking it again)");
    EXPECT_EQ(Message([&] { reducer.mark_ready(3); }),
              "gradient reducer: mark_ready(3): there are only 3 parameters");
    reducer.mark_ready(0);
    EXPECT_EQ(Message([&] { reducer.wait(); }),
              "gradient reducer: wait() before parameter 1 was marked ready (2 of 3 are)");
    reducer.mark_ready(1);
    reducer.wait();  // the iteration still completes normally
    ExpectAveraged(g, 2, 0);
  });
}

TEST(ReducerTest, RejectsBadGradientLists) {
  auto world = std::make_shared<FakeWorld>(1);
  FakeThreadGroup group(world, 0);
  std::vector<float> buffer(10);
  auto error = [&](std::vector<std::span<float>> grads, size_t bytes = 1024) {
    return Message([&] { GradientReducer reducer(group, grads, Options(bytes)); });
  };
  EXPECT_EQ(error({}), "gradient reducer needs at least one gradient");
  EXPECT_EQ(error({std::span(buffer), std::span<float>()}), "gradient reducer: parameter 1 has no elements");
  EXPECT_EQ(
      error({std::span(buffer).subspan(0, 6), std::span(buffer).subspan(8), std::span(buffer).subspan(5, 2)}),
      "gradient reducer: the buffers of parameters 0 and 2 overlap");
  EXPECT_EQ(error({std::span(buffer)}, 0), "gradient reducer bucket_bytes must be at least 1");
  EXPECT_THROW(GradientReducer(group, {std::span(buffer), std::span(buffer)}), ReducerUsageError);
}

TEST(ReducerTest, SingleRankLeavesGradientsAsTheyAre) {
  auto world = std::make_shared<FakeWorld>(1);
  FakeThreadGroup group(world, 0);
  Grads g({3, 4}, false);
  GradientReducer reducer(group, g.spans, Options(1));
  Fill(g, 0, 0);
  reducer.mark_ready(1);
  reducer.mark_ready(0);
  reducer.wait();
  ExpectAveraged(g, 1, 0);
  EXPECT_TRUE(world->events().empty());  // nothing to communicate
}

TEST(ReducerTest, BroadcastParametersCopiesTheRootsValuesWithFewCalls) {
  const std::vector<size_t> sizes = {1, 1000, (size_t{26} << 20) / sizeof(float), 5};
  auto world = std::make_shared<FakeWorld>(3);
  RunRanks(world, [&](int rank, ProcessGroup& group) {
    Grads p(sizes, false);
    Fill(p, rank, 0);
    BroadcastParameters(group, p.spans, /*root=*/1);
    for (size_t i = 0; i < sizes.size(); ++i)
      for (size_t j = 0; j < sizes[i]; j += 997) ASSERT_EQ(p.spans[i][j], Value(1, 0, i, j)) << i << " " << j;
    EXPECT_EQ(p.spans[3][4], Value(1, 0, 3, 4));
    EXPECT_EQ(Message([&] { BroadcastParameters(group, p.spans, 3); }),
              "BroadcastParameters: root 3 is not a rank of a group of 3");
  });
  std::vector<std::string> r0;
  for (const auto& e : world->events())
    if (e.rfind("r0 ", 0) == 0) r0.push_back(e);
  // The large parameter in place, the three small ones packed together.
  EXPECT_EQ(r0, (std::vector<std::string>{"r0 broadcast " + std::to_string(sizes[2]), "r0 broadcast 1006"}));
}

}  // namespace
}  // namespace ring::trial
