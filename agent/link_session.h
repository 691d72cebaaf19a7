#pragma once
// Internal to MasterLink: the state of one connection attempt to the master
// and, once welcomed, of its session: a WebSocket over ws:// (plain TCP) or
// wss:// (TLS). The reader, the writer and the heartbeat coroutines share it;
// all run on the link's strand. Includes Beast, so only master_link.cc
// includes it.
#include <chrono>
#include <memory>

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>

#include "common/asio/any_stream.h"

namespace ring {

using LinkStrand = boost::asio::strand<boost::asio::io_context::executor_type>;

struct LinkSession {
  // `tls` is the client context of a wss:// master, null for ws://.
  LinkSession(const LinkStrand& strand, boost::asio::ssl::context* tls)
      : ws(tls ? AnyStream(TlsStream(strand, *tls)) : AnyStream(boost::beast::tcp_stream(strand))),
        wake(strand),
        heartbeat(strand) {}
  boost::beast::tcp_stream& tcp() { return ws.next_layer().tcp(); }  // under the WebSocket (and TLS)
  boost::beast::websocket::stream<AnyStream> ws;
  boost::asio::steady_timer wake;  // the writer sleeps on it; cancel() wakes it
  boost::asio::steady_timer heartbeat;
  std::chrono::milliseconds interval{1000};
  bool welcomed = false;
  bool heartbeat_due = false;
  bool close_requested = false;  // Stop: the writer closes once the queue is empty
  bool closed = false;
};

}  // namespace ring
