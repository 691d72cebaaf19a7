// What the browser gets from a real master over HTTP: ETag and 304 on API
// lists that did not change, a fresh answer once they do, the kept lists
// gzip-compressed for clients that accept it, the web UI's
// files with their cache headers, client routes answered with the page and
// API paths never. Requests with If-None-Match go through curl.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/archive.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::webui_http {
namespace {

const char* kConfig = R"(name: etag
entrypoint: sleep 60
labels: [ui]
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 100
max_restarts: 0
)";

struct CurlResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

class WebUiHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    const fs::path webui = fs::path(cluster_.dir()) / "webui";
    fs::create_directories(webui / "assets");
    std::ofstream(webui / "index.html") << "<!doctype html><title>Ringmaster</title>";
    std::ofstream(webui / "assets" / "index-abc123.js") << "export {}";
    TestCluster::MasterOptions options;
    options.extra_args = {"--webui-dir", webui.string()};
    cluster_.StartMaster(options);
  }

  CurlResponse Curl(const std::string& target, const std::string& if_none_match = "",
                    const std::vector<std::string>& more = {}) {
    std::vector<std::string> argv = {"curl", "-sS", "-D", "-", "--max-time", "20"};
    if (!if_none_match.empty()) argv.insert(argv.end(), {"-H", "If-None-Match: " + if_none_match});
    argv.insert(argv.end(), more.begin(), more.end());
    // The UI's files need no token; API paths get the admin's, as the UI sends it.
    if (target.rfind("/api/", 0) == 0)
      argv.insert(argv.end(), {"-H", "Authorization: Bearer " + cluster_.admin_token()});
    argv.push_back(cluster_.url() + target);
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    CurlResponse out;
    const auto split = r.out.find("\r\n\r\n");
    const std::string head = r.out.substr(0, split);
    out.body = split == std::string::npos ? "" : r.out.substr(split + 4);
    std::istringstream lines(head);
    std::string line;
    std::getline(lines, line);
    if (line.size() > 12) out.status = std::stoi(line.substr(9, 3));
    while (std::getline(lines, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers[name] = line.substr(colon + 2);
    }
    // Checked against docs/openapi.json with the cluster's other answers.
    cluster_.answers()->Add({"GET", target, out.status, out.headers["content-type"], out.body});
    return out;
  }

  TestCluster cluster_;
};

TEST_F(WebUiHttpTest, ApiListsAnswer304UntilTheyChange) {
  auto first = Curl("/api/v1/experiments");
  ASSERT_EQ(first.status, 200);
  const std::string etag = first.headers["etag"];
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(first.headers["cache-control"], "no-cache");

  auto same = Curl("/api/v1/experiments", etag);
  EXPECT_EQ(same.status, 304);
  EXPECT_TRUE(same.body.empty());
  EXPECT_EQ(same.headers["etag"], etag);

  auto model = cluster_.MakeModelDir("model", {{"run.sh", "sleep 60\n"}});
  int status = 0;
  cluster_.PostJson("/api/v1/experiments",
                    {{"config", kConfig}, {"model_definition", Base64Encode(*PackDirectory(model))}},
                    &status);
  ASSERT_EQ(status, 201);

  auto changed = Curl("/api/v1/experiments", etag);
  EXPECT_EQ(changed.status, 200);
  EXPECT_NE(changed.headers["etag"], etag);
  auto list = nlohmann::json::parse(changed.body);
  EXPECT_EQ(list["total"], 1);
  EXPECT_EQ(list["experiments"][0]["labels"], nlohmann::json::array({"ui"}));
}

TEST_F(WebUiHttpTest, KeptListsAreGzippedForClientsThatAcceptIt) {
  auto model = cluster_.MakeModelDir("model", {{"run.sh", "sleep 60\n"}});
  for (int i = 0; i < 3; ++i) {  // a list over the size worth compressing
    int status = 0;
    cluster_.PostJson("/api/v1/experiments",
                      {{"config", kConfig}, {"model_definition", Base64Encode(*PackDirectory(model))}},
                      &status);
    ASSERT_EQ(status, 201);
  }
  auto plain = Curl("/api/v1/experiments");
  ASSERT_EQ(plain.status, 200);
  ASSERT_GE(plain.body.size(), 1024u);
  EXPECT_EQ(plain.headers.count("content-encoding"), 0u);
  EXPECT_EQ(plain.headers["vary"], "Accept-Encoding");

  // curl --compressed sends Accept-Encoding and inflates the body it gets.
  auto gz = Curl("/api/v1/experiments", "", {"--compressed"});
  ASSERT_EQ(gz.status, 200);
  EXPECT_EQ(gz.headers["content-encoding"], "gzip");
  EXPECT_EQ(gz.headers["vary"], "Accept-Encoding");
  EXPECT_EQ(gz.body, plain.body);
  EXPECT_LT(std::stoul(gz.headers["content-length"]), plain.body.size() / 2);
  EXPECT_NE(gz.headers["etag"], plain.headers["etag"]);  // two codings, two strong tags

  EXPECT_EQ(Curl("/api/v1/experiments", gz.headers["etag"], {"--compressed"}).status, 304);
  EXPECT_EQ(Curl("/api/v1/experiments", plain.headers["etag"]).status, 304);
  EXPECT_EQ(Curl("/api/v1/experiments", plain.headers["etag"], {"--compressed"}).status, 200);
}

TEST_F(WebUiHttpTest, ServesTheUiWithCacheHeadersAndClientRoutes) {
  auto page = Curl("/");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.body, "<!doctype html><title>Ringmaster</title>");
  EXPECT_EQ(page.headers["cache-control"], "no-cache");
  EXPECT_EQ(page.headers["content-type"], "text/html; charset=utf-8");
  EXPECT_EQ(Curl("/", page.headers["etag"]).status, 304);

  auto asset = Curl("/assets/index-abc123.js");
  EXPECT_EQ(asset.status, 200);
  EXPECT_EQ(asset.headers["cache-control"], "public, max-age=31536000, immutable");

  for (const char* route : {"/experiments/3", "/trials/9", "/cluster"}) {
    auto r = Curl(route);
    EXPECT_EQ(r.status, 200) << route;
    EXPECT_EQ(r.body, page.body) << route;
  }
  EXPECT_EQ(Curl("/assets/index-old.js").status, 404);
  auto api = Curl("/api/v1/no-such-thing");
  EXPECT_EQ(api.status, 404);
  EXPECT_NE(api.body.find("\"error\""), std::string::npos);
  EXPECT_EQ(Curl("/api/v1/pools").status, 200);
}

}  // namespace
}  // namespace ring::testing::webui_http
