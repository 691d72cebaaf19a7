// Conditional GET: ETags from the body, If-None-Match lists and weak tags,
// 304 without a body, and the answers it leaves alone.
#include <gtest/gtest.h>

#include "master/http/conditional_get.h"

namespace ring {
namespace {

ApiRequest Get(const std::string& if_none_match = "") {
  ApiRequest req;
  req.method = "GET";
  req.path = "/api/v1/experiments";
  if (!if_none_match.empty()) req.headers["if-none-match"] = if_none_match;
  return req;
}

TEST(ConditionalGetTest, EtagsFollowTheBody) {
  const auto a = BodyEtag("{\"experiments\":[]}");
  EXPECT_EQ(a.front(), '"');
  EXPECT_EQ(a.back(), '"');
  EXPECT_EQ(a, BodyEtag("{\"experiments\":[]}"));
  EXPECT_NE(a, BodyEtag("{\"experiments\":[1]}"));
  EXPECT_NE(BodyEtag(""), BodyEtag(std::string(1, '\0')));
}

TEST(ConditionalGetTest, IfNoneMatchForms) {
  const std::string tag = "\"abc-1\"";
  EXPECT_TRUE(EtagMatches("\"abc-1\"", tag));
  EXPECT_TRUE(EtagMatches("W/\"abc-1\"", tag));
  EXPECT_TRUE(EtagMatches("\"x\", \"abc-1\"", tag));
  EXPECT_TRUE(EtagMatches(" * ", tag));
  EXPECT_FALSE(EtagMatches("\"abc-2\"", tag));
  EXPECT_FALSE(EtagMatches("abc-1", tag));
  EXPECT_FALSE(EtagMatches(",", tag));
}

TEST(ConditionalGetTest, UnchangedBodiesBecome304) {
  auto res = ApiResponse::Json({{"experiments", nlohmann::json::array()}, {"total", 0}});
  const auto body = res.body;
  ApplyConditionalGet(Get(), res);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, body);
  const auto etag = res.Header("ETag");
  EXPECT_EQ(etag, BodyEtag(body));
  EXPECT_EQ(res.Header("Cache-Control"), "no-cache");

  auto again = ApiResponse::Json({{"experiments", nlohmann::json::array()}, {"total", 0}});
  ApplyConditionalGet(Get(etag), again);
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(again.Header("ETag"), etag);

  auto changed = ApiResponse::Json({{"experiments", nlohmann::json::array({1})}, {"total", 1}});
  ApplyConditionalGet(Get(etag), changed);
  EXPECT_EQ(changed.status, 200);
  EXPECT_FALSE(changed.body.empty());
}

TEST(ConditionalGetTest, LeavesOtherAnswersAlone) {
  auto post = ApiResponse::Json({{"id", 1}}, 201);
  ApiRequest req = Get("*");
  req.method = "POST";
  ApplyConditionalGet(req, post);
  EXPECT_EQ(post.status, 201);
  EXPECT_TRUE(post.Header("ETag").empty());

  auto error = ApiResponse::Error(NotFound("no such experiment"));
  ApplyConditionalGet(Get("*"), error);
  EXPECT_EQ(error.status, 404);
  EXPECT_TRUE(error.Header("ETag").empty());

  ApiResponse download;
  download.content_type = "application/gzip";
  download.body = "tar";
  ApplyConditionalGet(Get("*"), download);
  EXPECT_EQ(download.status, 200);
  EXPECT_EQ(download.body, "tar");

  ApiResponse huge = ApiResponse::Json({{"metrics", std::string(kMaxEtagBody, 'x')}});
  ApplyConditionalGet(Get("*"), huge);
  EXPECT_EQ(huge.status, 200);
  EXPECT_TRUE(huge.Header("ETag").empty());

  ApiResponse page;  // a static file keeps its own Cache-Control
  page.content_type = "text/html; charset=utf-8";
  page.body = "<!doctype html>";
  page.headers.emplace_back("Cache-Control", "no-cache");
  ApplyConditionalGet(Get(), page);
  EXPECT_FALSE(page.Header("ETag").empty());
  EXPECT_EQ(page.headers.size(), 2u);
}

}  // namespace
}  // namespace ring
