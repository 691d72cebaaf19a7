#pragma once
// Internal to the master's HTTP layer: the request loop of one connection,
// the same over plain TCP and over TLS (an AnyStream). Runs on the
// connection's strand; ends by closing the connection or by handing it to
// the agent channel (WebSocket upgrade).
#include <string>

#include <utility>  // before Asio

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "common/asio/any_stream.h"

#include "master/http/connection_counts.h"
#include "master/http/http_server.h"

namespace ring {

class Router;
class StaticFiles;
class AgentChannelAcceptor;
class TerminalChannelAcceptor;

// What every connection reads; owned by the HttpServer, outlives connections.
struct HttpSessionContext {
  const HttpServerOptions& options;
  const Router& router;
  AgentChannelAcceptor& agents;
  const StaticFiles& static_files;
  TerminalChannelAcceptor* terminals = nullptr;  // none: terminal endpoints answer 404
};

// Reads requests (with the read deadline, header and body limits) and
// answers them until the client closes, keep-alive ends or an agent's
// WebSocket upgrade takes the stream. `buffer` may hold bytes already read.
// A connection accepted over a limit (ticket.refusal()) is answered 503
// naming the limit, unless its request is an agent's WebSocket. A request
// with a body is refused (401, 403, 404, 405) before its body is read when
// the router would refuse it.
boost::asio::awaitable<void> ServeHttp(const HttpSessionContext& ctx, AnyStream& stream,
                                       boost::beast::flat_buffer& buffer, ConnectionCounts::Ticket& ticket);

// A plain-HTTP request on a TLS listener: answers 400 in plain text saying
// to use https://, and closes. `buffer` holds the bytes read so far.
boost::asio::awaitable<void> RejectPlainHttp(const HttpSessionContext& ctx, AnyStream& stream,
                                             boost::beast::flat_buffer& buffer);

}  // namespace ring
