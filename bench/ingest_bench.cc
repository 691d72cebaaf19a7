// Metric ingestion: trials report training metrics as fast as the master
// takes them, each over its own keep-alive connection with its allocation's
// token, in batches of the size the trial runtime sends (500 reports); and
// the ceiling, the same rows written straight into a SqliteStore from one
// thread in the same batches (no HTTP, JSON or authorization).
//   ingest_bench send URL ALLOCATIONS_FILE SECONDS BATCH METRICS
//     ALLOCATIONS_FILE: "trial_id allocation_id token" per line, one sender each
//   ingest_bench ceiling DB_FILE TRIALS SECONDS BATCH METRICS
// Prints one JSON object: requests, reports sent and stored, points (reports
// times metrics) per second, request latency p50/p99, errors.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/http_client.h"
#include "master/store/sqlite_store.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Sender {
  int64_t trial = 0;
  std::string allocation, token;
  int64_t requests = 0, sent = 0, stored = 0, errors = 0;
  std::vector<double> latency_ms;
  std::string last_error;
};

// `batch` training reports from batch number `first` on, each with `metrics` values.
std::string ReportsJson(int64_t first, int batch, int metrics, bool wrap) {
  std::string out = wrap ? "{\"reports\":[" : "[";
  char buf[64];
  for (int i = 0; i < batch; ++i) {
    const int64_t b = first + i;
    if (i) out += ',';
    out += wrap ? "{\"kind\":\"training\",\"batches\":" + std::to_string(b) + ",\"metrics\":{" : "{";
    for (int m = 0; m < metrics; ++m) {
      std::snprintf(buf, sizeof buf, "%s\"m%d\":%.6f", m ? "," : "", m, 1.0 / static_cast<double>(b + m));
      out += buf;
    }
    out += wrap ? "}}" : "}";
  }
  out += wrap ? "]}" : "]";
  return out;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

nlohmann::json Summary(const std::vector<Sender>& senders, double seconds, int metrics) {
  int64_t requests = 0, sent = 0, stored = 0, errors = 0;
  std::vector<double> latency;
  std::string last_error;
  for (const auto& s : senders) {
    requests += s.requests;
    sent += s.sent;
    stored += s.stored;
    errors += s.errors;
    latency.insert(latency.end(), s.latency_ms.begin(), s.latency_ms.end());
    if (!s.last_error.empty()) last_error = s.last_error;
  }
  return {{"seconds", seconds},
          {"senders", senders.size()},
          {"requests", requests},
          {"reports_sent", sent},
          {"reports_stored", stored},
          {"errors", errors},
          {"last_error", last_error},
          {"points_per_s", static_cast<double>(stored * metrics) / seconds},
          {"reports_per_s", static_cast<double>(stored) / seconds},
          {"requests_per_s", static_cast<double>(requests) / seconds},
          {"p50_ms", Percentile(latency, 0.50)},
          {"p99_ms", Percentile(latency, 0.99)}};
}

int Send(const std::string& url, const std::string& file, double seconds, int batch, int metrics) {
  std::vector<Sender> senders;
  std::ifstream in(file);
  for (Sender s; in >> s.trial >> s.allocation >> s.token;) senders.push_back(s);
  if (senders.empty()) {
    std::cerr << "ingest_bench: no allocations in " << file << "\n";
    return 2;
  }
  auto base = ring::Url::Parse(url);
  if (!base.ok()) {
    std::cerr << "ingest_bench: " << base.status().message() << "\n";
    return 2;
  }
  const auto start = Clock::now();
  const auto until =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> threads;
  for (auto& s : senders)
    threads.emplace_back([&s, &base, until, batch, metrics] {
      ring::HttpClient http(*base);
      http.SetBearerToken(s.token);
      const std::string target = "/api/v1/allocations/" + s.allocation + "/metrics";
      for (int64_t next = 1; Clock::now() < until; next += batch) {
        const std::string body = ReportsJson(next, batch, metrics, true);
        const auto t0 = Clock::now();
        auto res = http.Post(target, body);
        s.latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        ++s.requests;
        s.sent += batch;
        if (!res.ok() || res->status != 200) {
          ++s.errors;
          s.last_error = res.ok() ? std::to_string(res->status) + " " + res->body : res.status().message();
          continue;
        }
        auto j = nlohmann::json::parse(res->body, nullptr, false);
        if (j.is_object() && j.contains("stored")) s.stored += j["stored"].get<int64_t>();
      }
    });
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::cout << Summary(senders, elapsed, metrics).dump() << "\n";
  return 0;
}

int Ceiling(const std::string& db, int trials, double seconds, int batch, int metrics) {
  auto store = ring::SqliteStore::Open(db);
  if (!store.ok()) {
    std::cerr << "ingest_bench: " << store.status().message() << "\n";
    return 2;
  }
  ring::ExperimentRecord e;
  e.config_yaml = "name: ceiling";
  const int64_t experiment = *(*store)->CreateExperiment(e, "");
  std::vector<Sender> senders(static_cast<size_t>(trials));
  for (auto& s : senders) {
    ring::TrialRecord t;
    t.experiment_id = experiment;
    s.trial = *(*store)->CreateTrial(t);
  }
  const auto start = Clock::now();
  const auto until =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<int64_t> next(senders.size(), 1);
  // Round robin over the trials, as the requests of many trials interleave.
  for (size_t i = 0; Clock::now() < until; i = (i + 1) % senders.size()) {
    auto& s = senders[i];
    const auto values = nlohmann::json::parse(ReportsJson(next[i], batch, metrics, false));
    std::vector<ring::MetricReport> reports;
    for (int k = 0; k < batch; ++k)
      reports.push_back(
          {s.trial, ring::MetricKind::kTraining, next[i] + k, values[static_cast<size_t>(k)].dump(), "bench", ""});
    const auto t0 = Clock::now();
    auto stored = (*store)->AddMetrics(reports);
    s.latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    ++s.requests;
    s.sent += batch;
    if (stored.ok())
      s.stored += *stored;
    else
      ++s.errors;
    next[i] += batch;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::cout << Summary(senders, elapsed, metrics).dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 6 && args[0] == "send")
    return Send(args[1], args[2], std::stod(args[3]), std::stoi(args[4]), std::stoi(args[5]));
  if (args.size() == 6 && args[0] == "ceiling")
    return Ceiling(args[1], std::stoi(args[2]), std::stod(args[3]), std::stoi(args[4]), std::stoi(args[5]));
  std::cerr << "usage: ingest_bench send URL ALLOCATIONS_FILE SECONDS BATCH METRICS\n"
               "       ingest_bench ceiling DB_FILE TRIALS SECONDS BATCH METRICS\n";
  return 2;
}
