#pragma once
// The task proxy's listener: the master's second origin, serving
// /proxy/<task id>/ of every task that announced a service, to its owner and
// admins holding the cookie a one-time link gave them (proxy_session.h).
// Plain, or HTTPS with the master's certificate when the master has TLS.
// Connections are coroutines, each on its own strand, counted per client
// address like the main listener's.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace boost::asio {
class io_context;
}

namespace ring {

class TaskProxy;

struct ProxyServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;                                       // 0 picks a free port
  std::chrono::milliseconds read_timeout{30000};           // a request's header, and idle keep-alive
  std::chrono::milliseconds idle_timeout{15 * 60 * 1000};  // a proxied exchange without traffic
  std::chrono::milliseconds connect_timeout{10000};        // reaching the task's server
  uint32_t header_limit = 64 * 1024;                       // request line and header fields
  uint32_t max_connections = 4096;
  uint32_t max_connections_per_address = 256;
  std::string tls_cert_file;  // both set: HTTPS only
  std::string tls_key_file;
  std::chrono::milliseconds tls_handshake_timeout{10000};
};

class ProxyServer {
 public:
  ProxyServer(boost::asio::io_context& ioc, ProxyServerOptions options, TaskProxy& proxy);
  ~ProxyServer();
  // Binds and starts accepting; returns the bound port.
  Result<uint16_t> Start();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ring
