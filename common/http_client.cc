#include "common/http_client.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <vector>

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "common/tls_client.h"

namespace ring {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

Result<Url> Url::Parse(std::string_view text) {
  Url url;
  std::string_view rest = text;
  if (auto pos = rest.find("://"); pos != std::string_view::npos) {
    url.scheme = std::string(rest.substr(0, pos));
    rest.remove_prefix(pos + 3);
  } else {
    url.scheme = "http";
  }
  if (url.scheme != "http" && url.scheme != "https")
    return InvalidArgument("unsupported URL scheme \"" + url.scheme + "\" in " + std::string(text) +
                           " (use http:// or https://)");
  auto slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  if (slash != std::string_view::npos) url.path = std::string(rest.substr(slash));
  while (!url.path.empty() && url.path.back() == '/') url.path.pop_back();
  auto colon = hostport.rfind(':');
  if (colon == std::string_view::npos) {
    url.host = std::string(hostport);
    url.port = url.scheme == "https" ? "443" : "80";
  } else {
    url.host = std::string(hostport.substr(0, colon));
    url.port = std::string(hostport.substr(colon + 1));
  }
  if (url.host.empty()) return InvalidArgument("URL has no host: " + std::string(text));
  if (url.port.empty() || url.port.find_first_not_of("0123456789") != std::string::npos)
    return InvalidArgument("URL has a bad port: " + std::string(text));
  return url;
}

std::string Url::ToString() const {
  return scheme + "://" + host + ":" + port + path;
}

std::string CaFileFromEnv() {
  const char* v = std::getenv(kCaFileEnv);
  return v ? v : "";
}

Status CheckCaFile(const std::string& path) {
  return MakeClientTlsContext(path).status();
}

bool IsCertificateFailure(const Status& status) {
  return status.message().rfind("certificate verify failed", 0) == 0;
}

namespace {

// Records an operation's outcome. One handler type for every operation, so
// each of Beast's operations is instantiated once in this file.
struct Done {
  beast::error_code* result;
  template <class... Rest>
  void operator()(beast::error_code ec, Rest&&...) const {
    *result = ec;
  }
};

// Runs one asynchronous operation to its end on `ioc`. Beast's blocking calls
// ignore a stream's expiry; its asynchronous ones honour it, so every step
// of a request gets the client's timeout this way.
template <class Initiate>
beast::error_code RunAsync(net::io_context& ioc, Initiate&& initiate) {
  beast::error_code result = net::error::would_block;
  initiate(Done{&result});
  ioc.restart();
  ioc.run();
  return result;
}

void CopyHeaders(const http::response<http::string_body>& res, HttpResponse& out) {
  for (const auto& field : res) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(field.value());
  }
}

}  // namespace

// One connection: plain TCP for http, TLS for https.
struct HttpClient::Connection {
  net::io_context ioc;
  std::optional<AnyStream> stream;
  beast::flat_buffer buffer;
  bool open = false;

  beast::tcp_stream& tcp() { return stream->tcp(); }
  // Reads a response, each read of the header and the body getting `timeout`
  // (a deadline on silence, so a large download is not cut off while data flows).
  beast::error_code ReadResponse(http::response_parser<http::string_body>& parser,
                                 std::chrono::milliseconds timeout) {
    tcp().expires_after(timeout);
    auto ec = RunAsync(ioc, [&](Done h) { http::async_read_header(*stream, buffer, parser, h); });
    while (!ec && !parser.is_done()) {
      tcp().expires_after(timeout);
      ec = RunAsync(ioc, [&](Done h) { http::async_read_some(*stream, buffer, parser, h); });
    }
    return ec;
  }
};

HttpClient::HttpClient(Url base, std::chrono::milliseconds timeout)
    : base_(std::move(base)),
      timeout_(timeout),
      ca_file_(CaFileFromEnv()),
      conn_(std::make_unique<Connection>()) {}

HttpClient::~HttpClient() {
  if (conn_ && conn_->open) {
    beast::error_code ec;
    conn_->tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
  }
}

void HttpClient::SetCaFile(std::string path) {
  ca_file_ = std::move(path);
  tls_.reset();
}

Status HttpClient::Connect() {
  conn_ = std::make_unique<Connection>();
  beast::error_code ec;
  std::vector<tcp::endpoint> endpoints;
  if (!pinned_address_.empty()) {
    const auto address = net::ip::make_address(pinned_address_, ec);
    if (ec) return InvalidArgument("bad address " + pinned_address_ + ": " + ec.message());
    endpoints.emplace_back(address, static_cast<unsigned short>(std::stoi(base_.port)));
  } else {
    tcp::resolver resolver(conn_->ioc);
    auto resolved = resolver.resolve(base_.host, base_.port, ec);
    if (ec) return Status(ErrorCode::kUnavailable, "cannot resolve " + base_.host + ": " + ec.message());
    for (const auto& entry : resolved) endpoints.push_back(entry.endpoint());
  }
  if (base_.scheme == "https") {
    if (!tls_) {
      auto context = MakeClientTlsContext(ca_file_);
      if (!context.ok()) return context.status();
      tls_ = *context;
    }
    conn_->stream.emplace(TlsStream(conn_->ioc, *tls_));
    if (Status s = PrepareClientTls(*conn_->stream->tls(), base_.host); !s.ok()) return s;
  } else {
    conn_->stream.emplace(beast::tcp_stream(conn_->ioc));
  }
  auto& stream = conn_->tcp();
  stream.expires_after(timeout_);
  ec = RunAsync(conn_->ioc, [&](Done h) { stream.async_connect(endpoints, h); });
  if (ec)
    return Status(ErrorCode::kUnavailable, "cannot connect to " + base_.ToString() + ": " + ec.message());
  stream.socket().set_option(tcp::no_delay(true), ec);  // requests are not held back by Nagle
  if (auto* tls = conn_->stream->tls()) {
    stream.expires_after(timeout_);
    ec = RunAsync(conn_->ioc, [&](Done h) { tls->async_handshake(net::ssl::stream_base::client, h); });
    if (ec == beast::error::timeout)
      return Status(ErrorCode::kTimeout, "TLS handshake with " + base_.ToString() + " timed out");
    if (ec) return ClientHandshakeError(*tls, ec, base_.ToString());
  }
  conn_->open = true;
  return Status::Ok();
}

Result<HttpResponse> HttpClient::Request(std::string_view method, const std::string& target,
                                         const std::string& body, const std::string& content_type) {
  http::request<http::string_body> req;
  req.method(http::string_to_verb(method));
  req.target(base_.path + target);
  req.version(11);
  req.set(http::field::host, base_.host + ":" + base_.port);
  req.set(http::field::user_agent, "ringmaster/0.1");
  req.keep_alive(true);
  if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
  for (const auto& [name, value] : headers_) req.set(name, value);
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    req.set(http::field::content_type, content_type);
    req.body() = body;
  }
  req.prepare_payload();

  for (int attempt = 0; attempt < 2; ++attempt) {
    bool was_open = conn_->open;
    if (!conn_->open)
      if (Status s = Connect(); !s.ok()) return s;
    http::response_parser<http::string_body> parser;
    parser.body_limit(1ull << 31);
    conn_->tcp().expires_after(timeout_);
    auto ec = RunAsync(conn_->ioc, [&](Done h) { http::async_write(*conn_->stream, req, h); });
    if (!ec) ec = conn_->ReadResponse(parser, timeout_);
    if (ec) {
      conn_->open = false;
      // A reused keep-alive connection may have been closed by the server; retry once on a new one.
      if (was_open && ec != beast::error::timeout) continue;
      if (ec == beast::error::timeout)
        return Status(ErrorCode::kTimeout, "request to " + base_.ToString() + " timed out");
      return Status(ErrorCode::kUnavailable, "request to " + base_.ToString() + " failed: " + ec.message());
    }
    auto res = parser.release();
    HttpResponse out;
    out.status = static_cast<int>(res.result_int());
    out.body = std::move(res.body());
    CopyHeaders(res, out);
    if (!res.keep_alive()) conn_->open = false;
    return out;
  }
  return Status(ErrorCode::kUnavailable, "request to " + base_.ToString() + " failed");
}

Result<HttpResponse> HttpClient::RequestWithProgress(std::string_view method, const std::string& target,
                                                     const std::string& body, const UploadProgress& progress,
                                                     const std::string& content_type, size_t chunk_bytes) {
  if (chunk_bytes == 0) chunk_bytes = 256 * 1024;
  const uint64_t total = body.size();
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool was_open = conn_->open;
    if (!conn_->open)
      if (Status s = Connect(); !s.ok()) return s;

    // A buffer_body request: the header first, then the body chunk by chunk.
    http::request<http::buffer_body> req;
    req.method(http::string_to_verb(method));
    req.target(base_.path + target);
    req.version(11);
    req.set(http::field::host, base_.host + ":" + base_.port);
    req.set(http::field::user_agent, "ringmaster/0.1");
    req.set(http::field::content_type, content_type);
    req.keep_alive(true);
    if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
    for (const auto& [name, value] : headers_) req.set(name, value);
    req.content_length(total);
    req.body().data = nullptr;
    req.body().more = true;
    http::request_serializer<http::buffer_body> serializer(req);
    http::response_parser<http::string_body> parser;
    parser.body_limit(1ull << 31);
    auto ec = [&] {
      auto& ioc = conn_->ioc;
      auto& stream = *conn_->stream;
      conn_->tcp().expires_after(timeout_);
      auto wec = RunAsync(ioc, [&](Done h) { http::async_write_header(stream, serializer, h); });
      uint64_t sent = 0;
      while (!wec) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_bytes, total - sent));
        req.body().data = n ? const_cast<char*>(body.data() + sent) : nullptr;
        req.body().size = n;
        req.body().more = sent + n < total;
        conn_->tcp().expires_after(timeout_);
        wec = RunAsync(ioc, [&](Done h) { http::async_write(stream, serializer, h); });
        if (wec == http::error::need_buffer) wec = {};
        if (wec) break;
        sent += n;
        if (progress && n) progress(sent, total);
        if (sent >= total) break;
      }
      if (wec) return wec;
      return conn_->ReadResponse(parser, timeout_);
    }();
    if (ec) {
      conn_->open = false;
      // As in Request: a reused keep-alive connection may have been closed by the server.
      if (was_open && ec != beast::error::timeout) continue;
      if (ec == beast::error::timeout)
        return Status(ErrorCode::kTimeout, "request to " + base_.ToString() + " timed out");
      return Status(ErrorCode::kUnavailable, "request to " + base_.ToString() + " failed: " + ec.message());
    }
    auto res = parser.release();
    HttpResponse out;
    out.status = static_cast<int>(res.result_int());
    out.body = std::move(res.body());
    CopyHeaders(res, out);
    if (!res.keep_alive()) conn_->open = false;
    return out;
  }
  return Status(ErrorCode::kUnavailable, "request to " + base_.ToString() + " failed");
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string ErrorMessageFromBody(const HttpResponse& response) {
  auto j = nlohmann::json::parse(response.body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_object()) {
    const auto& e = j["error"];
    if (e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
  }
  std::string snippet = response.body.substr(0, 200);
  return "HTTP " + std::to_string(response.status) + (snippet.empty() ? "" : ": " + snippet);
}

}  // namespace ring
