// ResponseCache: answers kept per key and generation, built once, with their
// ETag and gzip form; errors and small bodies as they are.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "master/api/response_cache.h"
#include "master/http/conditional_get.h"
#include "master/http/content_encoding.h"

namespace ring {
namespace {

ApiResponse Built(std::string body, int status = 200) {
  ApiResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

TEST(ResponseCacheTest, KeepsAnswersUntilTheGenerationMoves) {
  ResponseCache cache;
  uint64_t generation = 1;
  int builds = 0;
  auto answer = [&](const std::string& key) {
    return cache.Answer([&] { return generation; }, key,
                        [&] { return Built(key + std::to_string(++builds)); });
  };
  EXPECT_EQ(answer("a").body, "a1");
  EXPECT_EQ(answer("a").body, "a1");
  EXPECT_EQ(answer("b").body, "b2");
  generation = 2;
  EXPECT_EQ(answer("a").body, "a3");
  EXPECT_EQ(answer("b").body, "b4");
  EXPECT_EQ(builds, 4);
}

TEST(ResponseCacheTest, KeptAnswersCarryTheirEtagAndGzipForm) {
  ResponseCache cache;
  const std::string big(4096, 'x');
  auto gen = [] { return uint64_t{7}; };
  for (int i = 0; i < 2; ++i) {  // built, then from the cache
    ApiResponse r = cache.Answer(gen, "big", [&] { return Built(big); });
    EXPECT_EQ(r.body, big);
    EXPECT_EQ(r.etag, BodyEtag(big));
    ASSERT_TRUE(r.gzip_body);
    EXPECT_EQ(*r.gzip_body, Gzip(big));
  }
  ApiResponse small = cache.Answer(gen, "small", [] { return Built("{}"); });
  EXPECT_EQ(small.etag, BodyEtag("{}"));
  EXPECT_FALSE(small.gzip_body);  // under kMinGzipBody
}

TEST(ResponseCacheTest, ErrorsAreNotKept) {
  ResponseCache cache;
  int builds = 0;
  auto gen = [] { return uint64_t{1}; };
  for (int i = 0; i < 3; ++i) {
    ApiResponse r = cache.Answer(gen, "k", [&] {
      ++builds;
      return Built("{\"error\":{}}", 404);
    });
    EXPECT_EQ(r.status, 404);
    EXPECT_FALSE(r.gzip_body);
  }
  EXPECT_EQ(builds, 3);
}

TEST(ResponseCacheTest, RequestsThatMissTogetherWaitForOneBuild) {
  ResponseCache cache;
  std::atomic<int> builds{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      ApiResponse r = cache.Answer([] { return uint64_t{1}; }, "k",
                                   [&] {
                                     ++builds;
                                     std::this_thread::sleep_for(std::chrono::milliseconds(50));
                                     return Built("answer");
                                   });
      EXPECT_EQ(r.body, "answer");
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(builds.load(), 1);
}

}  // namespace
}  // namespace ring
