// docs/openapi.json, as the master serves it, describes exactly the routes
// the router has: every (method, path) both ways, every {param} of a path
// declared as a path parameter, and who may call it (public routes need no
// token, the trial API an allocation token, the rest a user token).
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "master/api/routes.h"
#include "master/auth/accounts.h"
#include "tests/support/lifecycle_driver.h"
#include "master/store/memory_store.h"

namespace ring {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class OpenApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllRoutes(router_, ctx_);
    doc_ = nlohmann::json::parse(OpenApiDocument(), nullptr, false);
    ASSERT_FALSE(doc_.is_discarded()) << "docs/openapi.json is not JSON";
  }
  MemoryStore store_;
  testing::LifecycleDriver controller_{store_, testing::DriverOptions{}};
  Accounts accounts_{store_};
  ApiContext ctx_{store_, controller_.lifecycle(), controller_.agents(), "test", &accounts_};
  Router router_;
  nlohmann::json doc_;
};

TEST_F(OpenApiTest, IsAnOpenApi3DocumentWithBearerSchemes) {
  EXPECT_EQ(doc_["openapi"].get<std::string>().rfind("3.", 0), 0u);
  EXPECT_TRUE(doc_["info"].contains("title"));
  EXPECT_TRUE(doc_["info"].contains("version"));
  EXPECT_TRUE(doc_["paths"].is_object());
  EXPECT_EQ(doc_["components"]["securitySchemes"]["userToken"]["scheme"], "bearer");
  EXPECT_EQ(doc_["components"]["securitySchemes"]["allocationToken"]["scheme"], "bearer");
}

TEST_F(OpenApiTest, DescribesEveryRouteAndNoOther) {
  std::set<std::string> served, documented;
  for (const auto& r : router_.Routes()) {
    served.insert(Lower(r.method) + " " + r.pattern);
    const auto& path = doc_["paths"][r.pattern];
    ASSERT_TRUE(path.is_object()) << r.pattern << " is not in docs/openapi.json";
    const auto& op = path[Lower(r.method)];
    ASSERT_TRUE(op.is_object()) << r.method << " " << r.pattern << " is not in docs/openapi.json";
    EXPECT_TRUE(op.contains("summary") && op.contains("responses")) << r.pattern;
    // Who may call it, as the router enforces.
    const auto& security = op["security"];
    ASSERT_TRUE(security.is_array()) << r.pattern;
    if (r.access == Access::kPublic) {
      EXPECT_TRUE(security.empty()) << r.pattern << " is public";
    } else {
      ASSERT_EQ(security.size(), 1u) << r.pattern;
      EXPECT_TRUE(security[0].contains(r.access == Access::kAllocation ? "allocationToken" : "userToken"))
          << r.method << " " << r.pattern << " is " << AccessName(r.access);
    }
    // Every {param} of the pattern is a declared path parameter.
    for (const auto& segment : SplitPath(r.pattern)) {
      if (segment.front() != '{') continue;
      const std::string name = segment.substr(1, segment.size() - 2);
      bool declared = false;
      for (const auto& param : op.value("parameters", nlohmann::json::array()))
        declared = declared || (param["name"] == name && param["in"] == "path" && param["required"] == true);
      EXPECT_TRUE(declared) << r.method << " " << r.pattern << " does not declare {" << name << "}";
    }
  }
  for (const auto& [path, ops] : doc_["paths"].items())
    for (const auto& [method, op] : ops.items()) documented.insert(method + " " + path);
  for (const auto& d : documented) EXPECT_TRUE(served.contains(d)) << d << " is documented but not served";
}

}  // namespace
}  // namespace ring
