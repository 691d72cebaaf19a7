// AgentsList (GET /api/v1/agents): every answer comes from a list built
// after its request arrived; requests waiting together share one build; a
// page is a slice of the whole with its total; the whole list carries its
// ETag and, when asked, its gzip form.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "master/api/agents_list.h"
#include "master/http/conditional_get.h"
#include "master/http/content_encoding.h"

namespace ring {
namespace {

nlohmann::json Agents(int n, const std::string& state) {
  nlohmann::json list = nlohmann::json::array();
  for (int i = 0; i < n; ++i) list.push_back({{"id", "agent-" + std::to_string(i)}, {"state", state}});
  return list;
}

TEST(AgentsListTest, AnAnswerNeverPredatesItsRequest) {
  std::string state = "connected";
  AgentsList list([&] { return Agents(3, state); });
  const uint64_t first = list.Arrive();
  auto a = nlohmann::json::parse(list.Answer(first, {}, false).body);
  EXPECT_EQ(a["total"], 3);
  EXPECT_EQ(a["agents"][0]["state"], "connected");
  state = "disabled";  // a change, then a new request: it must see the change
  const uint64_t second = list.Arrive();
  auto b = nlohmann::json::parse(list.Answer(second, {}, false).body);
  EXPECT_EQ(b["agents"][0]["state"], "disabled");
  EXPECT_EQ(list.builds(), 2u);
}

TEST(AgentsListTest, RequestsThatWaitedTogetherShareOneBuild) {
  int builds = 0;
  AgentsList list([&] {
    ++builds;
    return Agents(5, "connected");
  });
  const uint64_t t1 = list.Arrive(), t2 = list.Arrive(), t3 = list.Arrive();
  const auto a = list.Answer(t1, {}, false);  // built after all three arrived
  const auto b = list.Answer(t2, {}, false);
  const auto c = list.Answer(t3, {.offset = 1, .limit = 2}, false);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(a.body, b.body);
  EXPECT_EQ(nlohmann::json::parse(c.body)["agents"].size(), 2u);
  list.Answer(list.Arrive(), {}, false);
  EXPECT_EQ(builds, 2);
}

TEST(AgentsListTest, PagesAreSlicesWithTheTotal) {
  AgentsList list([] { return Agents(10, "connected"); });
  auto page = [&](int64_t offset, std::optional<int64_t> limit) {
    return nlohmann::json::parse(list.Answer(list.Arrive(), {.offset = offset, .limit = limit}, false).body);
  };
  auto p = page(4, 3);
  EXPECT_EQ(p["total"], 10);
  ASSERT_EQ(p["agents"].size(), 3u);
  EXPECT_EQ(p["agents"][0]["id"], "agent-4");
  EXPECT_EQ(p["agents"][2]["id"], "agent-6");
  EXPECT_EQ(page(8, 5)["agents"].size(), 2u);
  EXPECT_EQ(page(20, 5)["agents"].size(), 0u);
  EXPECT_EQ(page(20, 5)["total"], 10);
  EXPECT_EQ(page(7, std::nullopt)["agents"].size(), 3u);  // no limit: the rest
  EXPECT_EQ(page(0, std::nullopt)["agents"].size(), 10u);
}

TEST(AgentsListTest, TheWholeListCarriesItsEtagAndGzipForm) {
  AgentsList list([] { return Agents(200, "connected"); });
  const auto plain = list.Answer(list.Arrive(), {}, false);
  EXPECT_EQ(plain.etag, BodyEtag(plain.body));
  EXPECT_EQ(plain.gzip_body, nullptr);
  const auto zipped = list.Answer(list.Arrive(), {}, true);
  ASSERT_NE(zipped.gzip_body, nullptr);
  EXPECT_LT(zipped.gzip_body->size(), zipped.body.size());
  EXPECT_EQ(nlohmann::json::parse(zipped.body)["total"], 200);
}

}  // namespace
}  // namespace ring
