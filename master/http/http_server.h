#pragma once
// The master's HTTP/1.1 listener (Boost.Beast on Asio), plain or, with a
// certificate and key, HTTPS only. Each connection is a coroutine on its own
// strand with a read deadline and a body limit (and a TLS handshake deadline);
// REST requests go to the Router, WebSocket upgrades of /api/v1/agents/ws go
// to the AgentChannelAcceptor, other GETs are static files of the web UI.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "master/http/address_ranges.h"

namespace boost::asio {
class io_context;
}

namespace ring {

class Router;
class AgentChannelAcceptor;
class TerminalChannelAcceptor;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;                           // 0 picks a free port
  std::chrono::milliseconds read_timeout{30000};  // per request, and idle keep-alive
  uint64_t body_limit = 8ull << 20;               // default request body limit
  uint64_t upload_body_limit = 200ull << 20;      // POST /api/v1/experiments
  uint32_t header_limit = 64 * 1024;              // request line and header fields
  // Users' HTTP connections open at once, and from one client address; one
  // more gets a 503 naming the limit and is closed. An agent's WebSocket
  // counts from its first request on apart from these, and is never refused
  // for lack of room (ConnectionCounts).
  uint32_t max_connections = 4096;
  uint32_t max_connections_per_address = 256;
  // Addresses whose connections count only against max_connections (an
  // operator lists the agents' addresses: connection_cap_exempt_addresses).
  AddressRanges connection_cap_exempt;
  std::string webui_dir;  // static files; empty = none
  // TLS: both set = HTTPS (and wss) only, TLS 1.2 or newer; a plain-HTTP
  // request gets a 400 saying to use https://. Both empty = plain HTTP.
  std::string tls_cert_file;  // PEM: the certificate, then any intermediates
  std::string tls_key_file;   // PEM: its private key, unencrypted
  std::chrono::milliseconds tls_handshake_timeout{10000};
};

// Loads a TLS certificate and key as Start does: a missing, unreadable or
// malformed file, or a key that does not match the certificate, is an error
// naming the file. For checking settings before anything else starts.
Status CheckTlsFiles(const std::string& cert_file, const std::string& key_file);

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& ioc, HttpServerOptions options, const Router& router,
             AgentChannelAcceptor& agents);
  ~HttpServer();

  // Loads the TLS certificate and key (when set), binds and starts
  // accepting. Returns the bound port. An unusable certificate or key file
  // is an error naming it.
  Result<uint16_t> Start();
  // Stops accepting new connections; open ones finish their current request.
  void Stop();
  // Users' WebSockets to tasks' terminals go to `terminals` (before Start).
  void SetTerminals(TerminalChannelAcceptor* terminals);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ring
