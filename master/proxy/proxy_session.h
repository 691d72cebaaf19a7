#pragma once
// Internal to the proxy: the request loop of one connection to the proxy's
// origin. Each request is let in on its own (the cookie of its path's task,
// the user still allowed), then forwarded to the task's server with its
// body streamed, and the answer streamed back; a WebSocket upgrade is
// relayed byte for byte both ways until either side closes or the
// connection is idle. Runs on the connection's strand.
#include <string>

#include <utility>  // before Asio

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "common/asio/any_stream.h"
#include "master/proxy/proxy_server.h"

namespace ring {

class TaskProxy;

struct ProxySessionContext {
  const ProxyServerOptions& options;
  TaskProxy& proxy;
  bool tls = false;  // the cookie is Secure, X-Forwarded-Proto https
};

boost::asio::awaitable<void> ServeProxy(const ProxySessionContext& ctx, AnyStream& client,
                                        boost::beast::flat_buffer& buffer, const std::string& peer);

}  // namespace ring
