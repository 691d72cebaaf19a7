// HttpClient::RequestWithProgress (used for model uploads) and the progress bar.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/progress_bar.h"
#include "common/http_client.h"
#include "tests/support/fake_http_server.h"

namespace ring {
namespace {

using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

TEST(CliUploadTest, SendsTheBodyInChunksReportingProgress) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{201, R"({"id":1})"}; });
  auto url = Url::Parse(server.url());
  ASSERT_TRUE(url.ok());
  HttpClient client(*url);
  client.SetBearerToken("tok");
  std::string body(1000 * 1000, 'x');
  for (size_t i = 0; i < body.size(); i += 997) body[i] = static_cast<char>('a' + i % 26);
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  auto res = client.RequestWithProgress(
      "POST", "/api/v1/experiments", body,
      [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); }, "application/json", 64 * 1024);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 201);
  EXPECT_EQ(res->body, R"({"id":1})");
  ASSERT_EQ(calls.size(), 16u);  // ceil(1,000,000 / 65,536)
  EXPECT_EQ(calls.front().first, 65536u);
  EXPECT_EQ(calls.back().first, body.size());
  for (const auto& c : calls) EXPECT_EQ(c.second, body.size());
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].body, body);
  EXPECT_EQ(requests[0].headers["content-length"], std::to_string(body.size()));
  EXPECT_EQ(requests[0].headers["authorization"], "Bearer tok");

  // An empty body is still a complete request; a second request reconnects
  // after the server closed the first connection.
  calls.clear();
  auto empty =
      client.RequestWithProgress("POST", "/x", "", [&](uint64_t d, uint64_t t) { calls.emplace_back(d, t); });
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(calls.empty());
  EXPECT_EQ(server.requests().back().body, "");
}

TEST(CliUploadTest, UnreachableIsUnavailable) {
  const ring::testing::HeldPort closed;
  auto url = Url::Parse("http://127.0.0.1:" + std::to_string(closed.port()));
  HttpClient client(*url);
  auto res = client.RequestWithProgress("POST", "/x", "body", nullptr);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), ErrorCode::kUnavailable);
}

TEST(CliUploadTest, ProgressBarDrawsOnlyWhenEnabled) {
  std::ostringstream on, off;
  {
    cli::ProgressBar bar(on, "Uploading", true);
    bar.Update(512, 1024);
    bar.Update(1024, 1024);
  }
  {
    cli::ProgressBar bar(off, "Uploading", false);
    bar.Update(1024, 1024);
  }
  EXPECT_NE(on.str().find("\rUploading [###############...............] 50% 512 B / 1.0 KiB"),
            std::string::npos)
      << on.str();
  EXPECT_NE(on.str().find("100% 1.0 KiB / 1.0 KiB"), std::string::npos) << on.str();
  EXPECT_EQ(on.str().back(), '\n');
  EXPECT_EQ(off.str(), "");
}

}  // namespace
}  // namespace ring
