#pragma once
// Shared by the searcher tests of the trial runtime: an in-test master with
// a list of operations for the trial, and contexts in cluster and local mode
// whose output is kept.
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "ring/trial/trial.h"
#include "tests/support/fake_http_server.h"

namespace ring::trial::searcher_testing {

using namespace std::chrono_literals;
using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

inline const std::string kBase = "/api/v1/allocations/3.0";

// A master with a list of operations for the trial: it gives the first one
// not completed, holds `after=` requests (briefly) while that one is the
// operation named, and answers "done" once all are completed. `before`
// injects answers.
struct SearcherMaster {
  std::mutex mutex;
  std::deque<int64_t> operations;  // front: the outstanding one
  std::vector<std::pair<int64_t, double>> completed;
  std::vector<std::string> invalid;                                    // messages
  std::vector<std::tuple<std::string, int64_t, std::string>> metrics;  // kind, batches, metrics JSON
  std::function<std::optional<FakeResponse>(const FakeRequest&)> before;

  FakeResponse Handle(const FakeRequest& req) {
    if (before)
      if (auto r = before(req)) return *r;
    if (req.method == "GET" && req.target.rfind(kBase + "/searcher/operation", 0) == 0) {
      std::optional<int64_t> after;
      if (auto at = req.target.find("after="); at != std::string::npos)
        after = std::stoll(req.target.substr(at + 6));
      for (int i = 0;; ++i) {
        {
          std::lock_guard lock(mutex);
          if (operations.empty()) return {200, R"({"operation":null,"done":true})"};
          if (!after || operations.front() > *after)
            return {200,
                    nlohmann::json{{"operation", {{"length", operations.front()}}}, {"done", false}}.dump()};
          if (i == 5) return {200, R"({"operation":null,"done":false})"};
        }
        std::this_thread::sleep_for(20ms);  // a short long poll
      }
    }
    if (req.method == "POST" && req.target == kBase + "/searcher/completed") {
      const auto body = nlohmann::json::parse(req.body);
      std::lock_guard lock(mutex);
      const int64_t length = body["length"];
      if (operations.empty() || operations.front() != length) return {200, R"({"accepted":false})"};
      operations.pop_front();
      completed.emplace_back(length, body["metric"].get<double>());
      return {200, R"({"accepted":true})"};
    }
    if (req.method == "POST" && req.target == kBase + "/searcher/invalid_hparams") {
      std::lock_guard lock(mutex);
      invalid.push_back(nlohmann::json::parse(req.body)["message"]);
      return {200, R"({"recorded":true})"};
    }
    if (req.method == "POST" && req.target == kBase + "/metrics") {
      const auto body = nlohmann::json::parse(req.body);
      std::lock_guard lock(mutex);
      for (const auto& r : body["reports"])
        metrics.emplace_back(r["kind"], r["batches"], r["metrics"].dump());
      return {200, R"({"stored":1})"};
    }
    return {404, R"({"error":{"code":"not_found","message":"no such route"}})"};
  }
};

inline FakeResponse Ended() {
  return {409, R"({"error":{"code":"conflict","message":"allocation 3.0 has ended"}})"};
}

class RuntimeSearcherTest : public ::testing::Test {
 protected:
  Context Cluster(const std::string& url, Environment extra = {}) {
    Environment env = {{"RING_MASTER_URL", url},
                       {"RING_ALLOCATION_ID", "3.0"},
                       {"RING_ALLOCATION_TOKEN", "tok"},
                       {"RING_TRIAL_ID", "3"},
                       {"RING_MAX_LENGTH_BATCHES", "10"},
                       {"RING_API_RETRY_SECONDS", "5"},
                       {"RING_CHECKPOINT_STORAGE", R"({"host_path":"/tmp/ring-searcher-test-unused"})"}};
    for (auto& [k, v] : extra) env[k] = v;
    const char* argv[] = {"trial"};
    return Context::from_environment(1, argv, env, Options());
  }

  Context Local(std::vector<std::string> args, Environment env = {}) {
    args.insert(args.begin(), "trial");
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    return Context::from_environment(static_cast<int>(argv.size()), argv.data(), env, Options());
  }

  ContextOptions Options() {
    ContextOptions o;
    o.local_out = &out_;
    o.diagnostics = &diagnostics_;
    o.reporter.warn = [](const std::string&) {};
    o.reporter.close_timeout = 2s;
    return o;
  }

  // "METHOD target" of the searcher calls the master received, in order.
  static std::vector<std::string> SearcherCalls(const FakeHttpServer& master) {
    std::vector<std::string> calls;
    for (const auto& r : master.requests())
      if (r.target.find("/searcher/") != std::string::npos)
        calls.push_back(r.method + " " + r.target.substr(kBase.size()));
    return calls;
  }

  std::ostringstream out_;
  std::ostringstream diagnostics_;
};

using Calls = std::vector<std::string>;

}  // namespace ring::trial::searcher_testing
