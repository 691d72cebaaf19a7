#include "master/http/agent_ws_session.h"

#include <cstring>
#include <deque>

#include <unistd.h>

#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "common/agent_protocol.h"
#include "master/rm/agent_peers.h"
#include "master/rm/agentrm/agent_channel.h"
#include "master/rm/agentrm/agent_enrolments.h"
#include "master/rm/agentrm/agent_rm.h"

namespace ring {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;

// Over plain TCP (ws) or TLS after its handshake (wss).
class AgentWsSession : public AgentChannel, public std::enable_shared_from_this<AgentWsSession> {
 public:
  AgentWsSession(AnyStream stream, AgentPeers& agents, const AgentWsAcceptor::Defer& defer,
                 std::string agent_id)
      : ws_(std::move(stream)), agents_(agents), defer_(defer), agent_id_(std::move(agent_id)) {}

  void Send(std::string frame) override {
    net::post(ws_.get_executor(), [self = this->shared_from_this(), frame = std::move(frame)]() mutable {
      if (self->closed_) return;
      if (self->outbox_.size() >= kMaxQueued) {
        spdlog::warn("[agent-ws] agent {}: send queue full, closing", self->agent_id_);
        self->Close("send queue full");
        return;
      }
      self->outbox_.push_back(std::move(frame));
      if (!self->writing_) {
        self->writing_ = true;  // before the coroutine starts, so only one writer runs
        net::co_spawn(self->ws_.get_executor(), WriteLoop(self), net::detached);
      }
    });
  }

  void Close(std::string reason) override {
    net::post(ws_.get_executor(), [self = this->shared_from_this(), reason = std::move(reason)]() mutable {
      if (self->closed_) return;
      self->closed_ = true;
      self->ws_.next_layer().tcp().expires_after(std::chrono::seconds(2));
      // A close frame's reason holds at most 123 bytes (RFC 6455 5.5).
      if (kMaxCloseReason < reason.size()) reason.resize(kMaxCloseReason);
      self->ws_.async_close(websocket::close_reason(websocket::close_code::policy_error, reason),
                            [self](beast::error_code) { self->ws_.next_layer().tcp().close(); });
    });
  }

  net::any_io_executor executor() { return ws_.get_executor(); }

  // A coroutine starts after its caller returns, so it holds `self` as a
  // parameter (copied into its frame) to keep the session alive.
  static net::awaitable<void> Run(std::shared_ptr<AgentWsSession> self,
                                  beast::http::request<beast::http::string_body> request) {
    return self->Serve(self, std::move(request));
  }

 private:
  net::awaitable<void> Serve(std::shared_ptr<AgentWsSession> self,
                             beast::http::request<beast::http::string_body> request) {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.read_message_max(16 << 20);
    beast::error_code aec;
    co_await ws_.async_accept(request, net::redirect_error(net::use_awaitable, aec));
    if (aec) co_return;
    beast::flat_buffer buffer;
    for (;;) {
      beast::error_code ec;
      auto n = co_await ws_.async_read(buffer, net::redirect_error(net::use_awaitable, ec));
      (void)n;
      if (ec) break;
      const auto now = std::chrono::steady_clock::now();
      // Most frames are heartbeats, byte for byte what proto::Encode makes
      // of one (as ringagent sends them): known without a JSON parse. Any
      // other spelling of a heartbeat is decoded below as before.
      if (said_hello_ && IsHeartbeatFrame(buffer)) {
        buffer.consume(buffer.size());
        agents_.OnMessage(agent_id_, proto::Message{proto::Heartbeat{}}, now);
        continue;
      }
      std::string text = beast::buffers_to_string(buffer.data());
      buffer.consume(buffer.size());
      auto message = proto::Decode(text);
      if (!message.ok()) {
        spdlog::warn("[agent-ws] agent {}: bad message: {}", agent_id_.empty() ? "?" : agent_id_,
                     message.status().message());
        continue;
      }
      if (auto* hello = std::get_if<proto::Hello>(&*message)) {
        said_hello_ = true;
        if (agents_.ClosesSilentConnections()) {
          // From here the peers' heartbeat deadline closes a silent
          // connection. Beast's idle timer would be re-armed on every read:
          // a timer cancelled, its handler run and a new wait allocated per
          // heartbeat, 10,000 a second with 10,000 agents.
          websocket::stream_base::timeout timeouts;
          ws_.get_option(timeouts);
          timeouts.idle_timeout = websocket::stream_base::none();
          ws_.set_option(timeouts);
        }
        defer_([this, self, hello = *hello, now] { agents_.OnHello(agent_id_, hello, self, now); });
      } else if (!said_hello_) {
        Close("the first message must be hello");
        break;
      } else {
        agents_.OnMessage(agent_id_, *message, now);
      }
    }
    closed_ = true;
    if (said_hello_)
      defer_([this, self, id = agent_id_, now = std::chrono::steady_clock::now()] {
        agents_.OnDisconnected(id, this, now);
      });
  }

  static bool IsHeartbeatFrame(const beast::flat_buffer& buffer) {
    static const std::string kHeartbeat = proto::Encode(proto::Heartbeat{});
    const auto data = buffer.data();
    return data.size() == kHeartbeat.size() && std::memcmp(data.data(), kHeartbeat.data(), data.size()) == 0;
  }

  static constexpr size_t kMaxQueued = 10000;
  static constexpr size_t kMaxCloseReason = 123;

  static net::awaitable<void> WriteLoop(std::shared_ptr<AgentWsSession> self) { return self->Write(self); }

  net::awaitable<void> Write(std::shared_ptr<AgentWsSession> /*keep_alive*/) {
    while (!outbox_.empty() && !closed_) {
      ws_.text(true);
      beast::error_code ec;
      auto n =
          co_await ws_.async_write(net::buffer(outbox_.front()), net::redirect_error(net::use_awaitable, ec));
      (void)n;
      if (ec) break;
      outbox_.pop_front();
    }
    writing_ = false;
  }

  websocket::stream<AnyStream> ws_;
  AgentPeers& agents_;
  const AgentWsAcceptor::Defer& defer_;
  const std::string agent_id_;  // authenticated at the upgrade
  bool said_hello_ = false;
  std::deque<std::string> outbox_;  // owned by the strand
  bool writing_ = false;
  bool closed_ = false;
};

}  // namespace

Result<std::string> AgentWsAcceptor::Admit(const beast::http::request<beast::http::string_body>& request,
                                           const std::string& peer) {
  auto id = request.find(std::string(kAgentIdHeader));
  if (id != request.end() && std::string_view(id->value()).rfind(kJobAgentPrefix, 0) == 0) {
    if (!jobs_) return Status(ErrorCode::kUnauthenticated, "this master has no Slurm pool");
    return jobs_->Authenticate(request[beast::http::field::authorization], std::string_view(id->value()),
                               peer);
  }
  return enrolments_.Authenticate(request[beast::http::field::authorization],
                                  id == request.end() ? std::string_view() : std::string_view(id->value()),
                                  peer);
}

namespace {

// The same plain-TCP connection on a strand of `channel`; `stream` itself
// when it is TLS or the move fails (then it stays on its threads).
AnyStream OnChannel(AnyStream stream, net::io_context& channel) {
  if (stream.tls()) return stream;
  auto& socket = stream.tcp().socket();
  beast::error_code ec;
  const auto protocol = socket.local_endpoint(ec).protocol();
  if (ec) return stream;
  // A connection nothing reads or writes: no operation is cut short.
  const auto fd = socket.release(ec);
  if (ec) return stream;
  net::ip::tcp::socket moved(net::make_strand(channel));
  moved.assign(protocol, fd, ec);
  if (ec) {
    spdlog::warn("[agent-ws] cannot move a connection to the agents' threads: {}", ec.message());
    ::close(fd);
    return stream;  // closed: the agent reconnects
  }
  return AnyStream(beast::tcp_stream(std::move(moved)));
}

}  // namespace

void AgentWsAcceptor::Accept(AnyStream stream, beast::http::request<beast::http::string_body> request,
                             std::string agent_id) {
  if (channel_) stream = OnChannel(std::move(stream), *channel_);
  AgentPeers& peers = jobs_ && agent_id.rfind(kJobAgentPrefix, 0) == 0 ? *jobs_ : agents_;
  auto session = std::make_shared<AgentWsSession>(std::move(stream), peers, defer_, std::move(agent_id));
  auto executor = session->executor();
  net::co_spawn(executor, AgentWsSession::Run(session, std::move(request)), [](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      spdlog::warn("[agent-ws] session ended with an error: {}", ex.what());
    }
  });
}

}  // namespace ring
