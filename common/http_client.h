#pragma once
// A small blocking HTTP/1.1 client over Boost.Beast, used by the CLI, the
// agent (model downloads) and the trial runtime. It keeps one keep-alive
// connection and reconnects once when the server closed it. https:// URLs
// verify the server's certificate and host name against the system's CAs
// plus an optional CA file (SetCaFile, by default $RING_CA_FILE). Every
// step (connect, handshake, each write and read) gets the timeout. Not
// thread-safe: use one instance per thread.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace boost::asio::ssl {
class context;
}

namespace ring {

// The environment variable naming a CA file (PEM) that clients trust besides
// the system's CAs: the CLI, the agent and trial processes read it.
inline constexpr const char* kCaFileEnv = "RING_CA_FILE";
// $RING_CA_FILE, or "" when unset.
std::string CaFileFromEnv();
// Loads `path` as a CA file; an error names the file and why it is unusable.
Status CheckCaFile(const std::string& path);
// True for an https:// server whose certificate did not verify (retrying
// will not help; the message says what to do).
bool IsCertificateFailure(const Status& status);

struct Url {
  std::string scheme;  // "http" or "https"
  std::string host;
  std::string port;
  std::string path;  // path prefix, without a trailing '/', may be empty

  // Accepts "http[s]://host[:port][/prefix]" and "host:port" (http); the
  // port defaults to 80 for http, 443 for https.
  static Result<Url> Parse(std::string_view text);
  std::string ToString() const;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
};

class HttpClient {
 public:
  explicit HttpClient(Url base, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sent as "Authorization: Bearer <token>" on every request when not empty.
  void SetBearerToken(std::string token) { token_ = std::move(token); }
  void SetTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  // More request headers, sent on every request (a value replaces the
  // header's earlier one; an empty value removes it).
  void SetHeader(const std::string& name, std::string value) {
    if (value.empty())
      headers_.erase(name);
    else
      headers_[name] = std::move(value);
  }
  // The CA file (PEM) trusted besides the system's CAs for https:// URLs;
  // "" for the system's only. Defaults to $RING_CA_FILE.
  void SetCaFile(std::string path);
  // Connects to this address (IPv4 or IPv6 text) instead of resolving the
  // URL's host, which still names the server in Host, SNI and the
  // certificate check: for callers that checked the address themselves
  // (webhooks, against DNS rebinding). Set before the first request.
  void PinAddress(std::string address) { pinned_address_ = std::move(address); }

  // `target` is appended to the base URL's path ("/api/v1/health").
  // Transport failures are kUnavailable (or kTimeout); any HTTP status is a
  // successful Result carrying that status.
  Result<HttpResponse> Request(std::string_view method, const std::string& target,
                               const std::string& body = {},
                               const std::string& content_type = "application/json");
  // Like Request, but writes the body in chunks of `chunk_bytes` and calls
  // `progress(bytes sent, total bytes)` after each one (for upload progress
  // bars). Each chunk gets the full timeout. Like Request, a reused
  // keep-alive connection that turns out closed is retried once.
  using UploadProgress = std::function<void(uint64_t, uint64_t)>;
  Result<HttpResponse> RequestWithProgress(std::string_view method, const std::string& target,
                                           const std::string& body, const UploadProgress& progress,
                                           const std::string& content_type = "application/json",
                                           size_t chunk_bytes = 256 * 1024);
  Result<HttpResponse> Get(const std::string& target) { return Request("GET", target); }
  Result<HttpResponse> Post(const std::string& target, const std::string& body) {
    return Request("POST", target, body);
  }

 private:
  struct Connection;
  // Opens a new connection (TCP, then the TLS handshake for https).
  Status Connect();

  Url base_;
  std::chrono::milliseconds timeout_;
  std::string token_;
  std::map<std::string, std::string> headers_;
  std::string ca_file_;
  std::string pinned_address_;
  std::shared_ptr<boost::asio::ssl::context> tls_;  // made at the first https connection
  std::unique_ptr<Connection> conn_;
};

// Percent-encodes everything but RFC 3986 unreserved characters, for a path
// segment or a query value.
std::string PercentEncode(std::string_view text);

// The message of an error body ({"error": {"code", "message"}}) or, when the
// body is not one, a short description with the status.
std::string ErrorMessageFromBody(const HttpResponse& response);

}  // namespace ring
