// Fuzzes what the master's REST API and agent channel decode from untrusted
// bytes, below the HTTP layer: the lifecycle (driven by tests/support/lifecycle_driver.h, on
// the in-memory store) with one experiment whose trial runs on one agent, so
// that calls authorised by the allocation token reach their body decoders.
//
// The first byte picks the request; the rest is its body:
//   0 POST /experiments: the config YAML (with a fixed model definition)
//   1 POST /experiments: the model definition tar.gz (with a fixed config)
//   2 POST /allocations/{id}/metrics: {"reports": [...]}
//   3 POST /allocations/{id}/searcher/completed: {"length", "metric"}
//   4 POST /allocations/{id}/searcher/invalid_hparams: {"message"}
//   5 POST /allocations/{id}/checkpoints: {"uuid", "batches", "resources", "metadata"}
//   6 PATCH /experiments/{id}: {"priority", "weight", "max_slots"}
//   7 PUT /allocations/{id}/rendezvous?<query>: "<query>\n<value>"
//   8 GET /experiments?<query>: the query string (filters, sort, paging)
//   9 agent channel frame (hello, state, log batch...) from the connected agent
//  10 a stored metrics object, as the chart endpoints scan it
// Every refusal must be a 4xx code (never kInternal), and nothing may throw.
// Each input gets a new controller, so inputs do not depend on each other.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <variant>

#include "common/agent_protocol.h"
#include "common/archive.h"
#include "fuzz/fuzz_check.h"
#include "master/api/experiment_query.h"
#include "master/queries/metric_series.h"
#include "tests/support/lifecycle_driver.h"
#include "master/http/url_codec.h"
#include "master/store/memory_store.h"

namespace {

using ring::ErrorCode;
using ring::Status;

const char* const kConfig =
    "name: fuzz\nentrypoint: ./run.sh\nhyperparameters:\n  lr: 0.5\nsearcher:\n  name: single\n"
    "  metric: validation_loss\n  max_length:\n    batches: 100\n";

std::string g_model;  // a tar.gz of one run.sh, packed once

class NullChannel : public ring::AgentChannel {
 public:
  void Send(std::string frame) override { last = std::move(frame); }
  void Close(std::string) override {}
  std::string last;
};

void CheckRefusal(const Status& s) {
  FUZZ_CHECK(s.code() != ErrorCode::kInternal && s.code() != ErrorCode::kOk, s.ToString());
}

// Parses a request body as the REST layer does (master/api/route_helpers.cc
// ParseJsonBody: JSON without exceptions, objects only).
bool JsonBody(const std::string& body, nlohmann::json& out) {
  out = nlohmann::json::parse(body, nullptr, false);
  return !out.is_discarded() && out.is_object();
}

// One master with one running trial: experiment 1, allocation "1.0" on agent-1.
struct Master {
  ring::MemoryStore store;
  ring::testing::LifecycleDriver controller{store, [] {
                                          ring::testing::DriverOptions o;
                                          o.checkpoint_root = "/nonexistent/ring-fuzz-checkpoints";
                                          return o;
                                        }()};
  std::shared_ptr<NullChannel> channel = std::make_shared<NullChannel>();
  ring::SteadyTime now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  std::string allocation;
  std::string token;

  Master() {
    auto id = controller.CreateExperiment(kConfig, g_model, true, "fuzz");
    FUZZ_CHECK(id.ok() && *id == 1, id.status().ToString());
    ring::proto::Hello hello{"agent-1", "default", "10.0.0.1", "fuzz", {{0, "cpu", ""}}, {}};
    controller.OnAgentHello(hello, channel, now);
    auto start = ring::proto::Decode(channel->last);
    FUZZ_CHECK(start.ok() && std::holds_alternative<ring::proto::Start>(*start), channel->last);
    allocation = std::get<ring::proto::Start>(*start).allocation_id;
    token = std::get<ring::proto::Start>(*start).allocation_token;
    controller.OnAgentMessage(
        "agent-1", ring::proto::StateChange{allocation, 0, ring::proto::ProcessState::kRunning, {}, {}, ""},
        now);
  }
};

void Rendezvous(Master& m, const std::string& input) {
  const size_t newline = input.find('\n');
  const std::string query = input.substr(0, newline);
  const std::string value = newline == std::string::npos ? "" : input.substr(newline + 1);
  auto params = ring::ParseQuery(query);
  if (!params || !params->count("key")) return;  // 400 before the controller
  const std::string& key = params->at("key");
  const Status set = m.controller.RendezvousSet(m.allocation, m.token, key, value);
  if (!set.ok()) return CheckRefusal(set);
  auto got = m.controller.RendezvousGet(m.allocation, m.token, key);
  FUZZ_CHECK(got.ok() && got->value && *got->value == value, "a set key reads back differently: " + key);
}

void ScanMetrics(const std::string& text) {
  // Any text: no crash, whatever the scanner makes of it.
  (void)ring::ForEachMetric(text, [](std::string_view, double) {});
  (void)ring::MetricValue(text, "loss");
  // What is stored is a metrics object as the JSON library writes it (no
  // name twice): there the scanner must agree with the parser.
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return;
  const std::string stored = parsed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::map<std::string, double> scanned;
  const bool ok = ring::ForEachMetric(
      stored, [&](std::string_view name, double value) { scanned[std::string(name)] = value; });
  FUZZ_CHECK(ok, "the scanner refuses a JSON object: " + stored);
  std::map<std::string, double> numbers;
  for (const auto& [k, v] : parsed.items())
    if (v.is_number()) numbers[k] = v.get<double>();
  FUZZ_CHECK(scanned == numbers, "the scanner and the parser disagree on " + stored);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ring-fuzz-api-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "run.sh") << "#!/bin/sh\n";
  auto model = ring::PackDirectory(dir.string());
  fs::remove_all(dir);
  FUZZ_CHECK(model.ok(), model.status().ToString());
  g_model = *model;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int kind = data[0] % 11;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (kind == 8) {
    auto params = ring::ParseQuery(body);
    if (!params) return 0;
    auto q = ring::ParseExperimentQuery(*params);
    if (!q.ok()) CheckRefusal(q.status());
    return 0;
  }
  if (kind == 10) {
    ScanMetrics(body);
    return 0;
  }

  Master m;
  nlohmann::json j;
  switch (kind) {
    case 0:
    case 1: {
      auto id = kind == 0 ? m.controller.CreateExperiment(body, g_model, true, "fuzz")
                          : m.controller.CreateExperiment(kConfig, body, true, "fuzz");
      if (!id.ok()) CheckRefusal(id.status());
      m.controller.Tick(m.now);
      return 0;
    }
    case 2:
      if (!JsonBody(body, j)) return 0;
      if (auto r = m.controller.ReportMetrics(m.allocation, m.token, j); !r.ok()) CheckRefusal(r.status());
      return 0;
    case 3:
      if (!JsonBody(body, j)) return 0;
      if (auto r = m.controller.CompleteSearcherOperation(m.allocation, m.token, j); !r.ok())
        CheckRefusal(r.status());
      m.controller.Tick(m.now);
      return 0;
    case 4:
      if (!JsonBody(body, j)) return 0;
      if (Status s = m.controller.ReportInvalidHparams(m.allocation, m.token, j); !s.ok()) CheckRefusal(s);
      return 0;
    case 5:
      if (!JsonBody(body, j)) return 0;
      if (auto r = m.controller.RegisterCheckpoint(m.allocation, m.token, j); !r.ok())
        CheckRefusal(r.status());
      return 0;
    case 6:
      if (!JsonBody(body, j)) return 0;
      if (Status s = m.controller.SetResources(1, j); !s.ok()) CheckRefusal(s);
      m.controller.Tick(m.now);
      return 0;
    case 7:
      Rendezvous(m, body);
      return 0;
    case 9: {
      auto message = ring::proto::Decode(body);
      if (!message.ok()) return 0;
      if (auto* hello = std::get_if<ring::proto::Hello>(&*message)) {
        if (hello->agent_id.empty()) return 0;  // the session closes such a connection
        m.controller.OnAgentHello(*hello, std::make_shared<NullChannel>(), m.now);
      } else {
        m.controller.OnAgentMessage("agent-1", *message, m.now);
      }
      m.controller.Tick(m.now);
      return 0;
    }
  }
  return 0;
}
