#include "master/queries/metric_series.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace ring {
namespace {

// A forward scanner over one JSON text; every step checks the end.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    SkipSpace();
    return p_ == end_;
  }
  char Peek() {
    SkipSpace();
    return p_ < end_ ? *p_ : '\0';
  }
  // A string's raw bytes between the quotes; `escaped` when it holds a backslash.
  bool String(std::string_view& raw, bool& escaped) {
    if (!Eat('"')) return false;
    const char* start = p_;
    escaped = false;
    while (p_ < end_ && *p_ != '"') {
      if (*p_ == '\\') {
        escaped = true;
        if (++p_ == end_) return false;
      }
      ++p_;
    }
    if (p_ == end_) return false;
    raw = std::string_view(start, static_cast<size_t>(p_ - start));
    ++p_;
    return true;
  }
  // Skips one value; `number` receives it when it is a finite number.
  bool Value(std::optional<double>& number) {
    number.reset();
    const char c = Peek();
    if (c == '"') {
      std::string_view raw;
      bool escaped = false;
      return String(raw, escaped);
    }
    if (c == '{' || c == '[') return Nested();
    const char* start = p_;
    while (p_ < end_ && *p_ != ',' && *p_ != '}' && *p_ != ']' && *p_ != ' ' && *p_ != '\t' && *p_ != '\n' &&
           *p_ != '\r')
      ++p_;
    const std::string_view token(start, static_cast<size_t>(p_ - start));
    if (token == "null" || token == "true" || token == "false") return true;
    const size_t digit = !token.empty() && token[0] == '-' ? 1 : 0;  // JSON has no nan, inf or +1
    if (digit >= token.size() || token[digit] < '0' || token[digit] > '9') return false;
    double v = 0;
    auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec != std::errc() || ptr != token.data() + token.size()) return false;
    if (std::isfinite(v)) number = v;
    return true;
  }

 private:
  bool Nested() {
    int depth = 0;
    while (p_ < end_) {
      const char c = *p_;
      if (c == '"') {
        std::string_view raw;
        bool escaped = false;
        if (!String(raw, escaped)) return false;
        if (depth == 0) return true;
        continue;
      }
      ++p_;
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return true;
    }
    return false;
  }

  const char* p_;
  const char* end_;
};

std::string Unescape(std::string_view raw) {
  std::string quoted;
  quoted.reserve(raw.size() + 2);
  quoted.push_back('"');
  quoted.append(raw);
  quoted.push_back('"');
  auto j = nlohmann::json::parse(quoted, nullptr, false);
  return j.is_string() ? j.get<std::string>() : std::string(raw);
}

}  // namespace

bool ForEachMetric(std::string_view json, const std::function<void(std::string_view, double)>& fn) {
  Scanner s(json);
  if (!s.Eat('{')) return false;
  if (s.Eat('}')) return s.AtEnd();
  for (;;) {
    std::string_view raw;
    bool escaped = false;
    if (!s.String(raw, escaped) || !s.Eat(':')) return false;
    std::optional<double> number;
    if (!s.Value(number)) return false;
    if (number) {
      if (escaped)
        fn(Unescape(raw), *number);
      else
        fn(raw, *number);
    }
    if (s.Eat(',')) continue;
    return s.Eat('}') && s.AtEnd();
  }
}

std::optional<double> MetricValue(std::string_view json, std::string_view name) {
  std::optional<double> out;
  ForEachMetric(json, [&](std::string_view key, double value) {
    if (!out && key == name) out = value;
  });
  return out;
}

std::vector<size_t> LttbIndices(std::span<const double> x, std::span<const double> y, size_t max_points) {
  const size_t n = std::min(x.size(), y.size());
  std::vector<size_t> out;
  if (max_points < 2) max_points = 2;
  if (n <= max_points) {
    out.resize(n);
    for (size_t i = 0; i < n; ++i) out[i] = i;
    return out;
  }
  out.reserve(max_points);
  // Buckets between the fixed first and last points; from each, the point
  // that makes the largest triangle with the previous pick and the average of
  // the next bucket.
  const double every = static_cast<double>(n - 2) / static_cast<double>(max_points - 2);
  size_t a = 0;
  out.push_back(0);
  for (size_t i = 0; i + 2 < max_points; ++i) {
    const size_t from = static_cast<size_t>(std::floor(static_cast<double>(i) * every)) + 1;
    const size_t to =
        std::min(static_cast<size_t>(std::floor(static_cast<double>(i + 1) * every)) + 1, n - 1);
    const size_t next_from = to;
    const size_t next_to =
        std::min(static_cast<size_t>(std::floor(static_cast<double>(i + 2) * every)) + 1, n);
    double avg_x = 0, avg_y = 0;
    for (size_t j = next_from; j < next_to; ++j) {
      avg_x += x[j];
      avg_y += y[j];
    }
    const double count = static_cast<double>(std::max<size_t>(next_to - next_from, 1));
    avg_x /= count;
    avg_y /= count;
    if (next_to <= next_from) {  // the last bucket: aim at the last point
      avg_x = x[n - 1];
      avg_y = y[n - 1];
    }
    double best_area = -1;
    size_t best = from;
    for (size_t j = from; j < to; ++j) {
      const double area = std::abs((x[a] - avg_x) * (y[j] - y[a]) - (x[a] - x[j]) * (avg_y - y[a]));
      if (area > best_area) {
        best_area = area;
        best = j;
      }
    }
    if (best > a) {
      out.push_back(best);
      a = best;
    }
  }
  out.push_back(n - 1);
  return out;
}

MetricSeries ExtractSeries(const std::vector<MetricReport>& reports, std::string_view metric,
                           size_t max_points) {
  std::vector<double> x, y;
  x.reserve(reports.size());
  y.reserve(reports.size());
  for (const auto& r : reports)
    if (auto v = MetricValue(r.metrics_json, metric)) {
      x.push_back(static_cast<double>(r.batches));
      y.push_back(*v);
    }
  MetricSeries out;
  out.total = x.size();
  const auto picks = LttbIndices(x, y, max_points);
  out.batches.reserve(picks.size());
  out.values.reserve(picks.size());
  for (size_t i : picks) {
    out.batches.push_back(static_cast<int64_t>(x[i]));
    out.values.push_back(y[i]);
  }
  return out;
}

std::vector<size_t> DownsampleReports(const std::vector<MetricReport>& reports, std::string_view only_metric,
                                      size_t max_points) {
  struct Points {
    std::vector<size_t> index;
    std::vector<double> x, y;
  };
  std::map<std::string, Points, std::less<>> by_metric;
  for (size_t i = 0; i < reports.size(); ++i)
    ForEachMetric(reports[i].metrics_json, [&](std::string_view name, double value) {
      if (!only_metric.empty() && name != only_metric) return;
      auto it = by_metric.find(name);
      if (it == by_metric.end()) it = by_metric.emplace(std::string(name), Points{}).first;
      it->second.index.push_back(i);
      it->second.x.push_back(static_cast<double>(reports[i].batches));
      it->second.y.push_back(value);
    });
  std::vector<char> keep(reports.size(), 0);
  for (const auto& [name, points] : by_metric)
    for (size_t pick : LttbIndices(points.x, points.y, max_points)) keep[points.index[pick]] = 1;
  std::vector<size_t> out;
  for (size_t i = 0; i < reports.size(); ++i)
    if (keep[i]) out.push_back(i);
  return out;
}

std::vector<std::string> MetricNames(const std::vector<MetricReport>& reports) {
  std::set<std::string, std::less<>> names;
  for (const auto& r : reports)
    ForEachMetric(r.metrics_json, [&](std::string_view name, double) {
      if (names.find(name) == names.end()) names.emplace(name);
    });
  return {names.begin(), names.end()};
}

}  // namespace ring
