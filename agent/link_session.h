#pragma once
// Internal to MasterLink: the state of one connection attempt to the master
// and, once welcomed, of its session, over ws:// (beast::tcp_stream) or wss://
// (TlsStream). The reader, the writer and the heartbeat coroutines share it;
// all run on the link's strand. Includes Beast, so only master_link.cc
// includes it.
#include <chrono>
#include <memory>
#include <type_traits>

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include "common/tls_client.h"

namespace ring {

using LinkStrand = boost::asio::strand<boost::asio::io_context::executor_type>;

struct LinkSession {
  explicit LinkSession(const LinkStrand& strand) : wake(strand), heartbeat(strand) {}
  virtual ~LinkSession() = default;
  virtual boost::beast::tcp_stream& tcp() = 0;  // the connection under the WebSocket (and TLS)
  boost::asio::steady_timer wake;               // the writer sleeps on it; cancel() wakes it
  boost::asio::steady_timer heartbeat;
  std::chrono::milliseconds interval{1000};
  bool welcomed = false;
  bool heartbeat_due = false;
  bool close_requested = false;  // Stop: the writer closes once the queue is empty
  bool closed = false;
};

// A session's WebSocket over NextLayer: beast::tcp_stream for ws:// (an http
// master), TlsStream for wss:// (an https master).
template <class NextLayer>
struct WsLinkSession : LinkSession {
  static constexpr bool kTls = std::is_same_v<NextLayer, TlsStream>;
  // `tls` is the client context wss needs (unused for ws).
  WsLinkSession(const LinkStrand& strand, boost::asio::ssl::context* tls)
      : LinkSession(strand), ws(Make(strand, tls)) {}
  boost::beast::tcp_stream& tcp() override { return boost::beast::get_lowest_layer(ws); }
  boost::beast::websocket::stream<NextLayer> ws;

 private:
  static boost::beast::websocket::stream<NextLayer> Make(const LinkStrand& strand,
                                                         boost::asio::ssl::context* tls) {
    if constexpr (kTls) {
      return boost::beast::websocket::stream<NextLayer>(strand, *tls);
    } else {
      return boost::beast::websocket::stream<NextLayer>(strand);
    }
  }
};

}  // namespace ring
