#include "agent/master_link.h"

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <algorithm>
#include <atomic>
#include <random>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include "agent/link_session.h"
#include "agent/outbound_queue.h"
#include "common/http_client.h"
#include "common/tls_client.h"

namespace ring {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using Strand = LinkStrand;
using net::awaitable;
using net::use_awaitable;
using namespace std::chrono_literals;

namespace {

constexpr size_t kMaxIncomingMessage = 16u << 20;
constexpr auto kPollStep = 10ms;

}  // namespace

class MasterLink::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(net::io_context& io, Options options, Callbacks callbacks)
      : strand_(net::make_strand(io)),
        options_(std::move(options)),
        callbacks_(std::move(callbacks)),
        queue_(options_.max_queued_log_bytes, options_.max_queued_log_batches),
        retry_timer_(strand_),
        resolver_(strand_),
        rng_(std::random_device{}()) {
    auto url = Url::Parse(options_.master_url);
    if (url.ok()) {
      url_ = *url;
    } else {
      spdlog::error("[agent] agent={} bad master URL {}: {}", options_.agent_id, options_.master_url,
                    url.status().message());
    }
    if (url_.scheme == "https") {
      auto tls = MakeClientTlsContext(options_.ca_file);
      if (tls.ok()) {
        tls_ = *tls;
      } else {
        tls_error_ = tls.status().message();
        spdlog::error("[agent] agent={} {}", options_.agent_id, tls_error_);
      }
    }
  }

  void Start() {
    net::co_spawn(
        strand_, [self = shared_from_this()] { return self->Run(); }, net::detached);
  }

  void Send(proto::Message message) {
    net::post(strand_, [self = shared_from_this(), message = std::move(message)] {
      uint64_t dropped_before = self->queue_.dropped_batches();
      self->queue_.Push(message);
      self->queued_ = self->queue_.size();
      if (self->queue_.dropped_batches() != dropped_before && self->queue_.dropped_batches() % 100 == 1) {
        spdlog::warn("[agent] agent={} master unreachable: dropped {} log batches ({} lines) so far",
                     self->options_.agent_id, self->queue_.dropped_batches(), self->queue_.dropped_lines());
      }
      if (self->session_ && self->session_->welcomed) self->session_->wake.cancel();
    });
  }

  void Stop(std::function<void()> done) {
    net::post(strand_, [self = shared_from_this(), done = std::move(done)]() mutable {
      self->stop_waiters_.push_back(std::move(done));
      if (self->stopping_) return;
      self->stopping_ = true;
      net::co_spawn(
          self->strand_, [self] { return self->StopFlow(); }, net::detached);
    });
  }

  std::atomic<bool> connected_{false};
  std::atomic<int64_t> sessions_{0};
  std::atomic<size_t> queued_{0};

 private:
  awaitable<void> Run() {
    running_ = true;
    auto backoff = options_.backoff_initial;
    bool failing = false;
    while (!stopping_) {
      auto began = std::chrono::steady_clock::now();
      bool welcomed = co_await RunSession(failing);
      if (stopping_) break;
      failing = !welcomed;
      // Only a session that lasted resets the backoff: a master that welcomes
      // and then drops the agent at once must not be hammered.
      if (welcomed && std::chrono::steady_clock::now() - began >= options_.backoff_max)
        backoff = options_.backoff_initial;
      // Equal jitter: half the backoff fixed, half random, so agents do not reconnect in lockstep.
      std::uniform_int_distribution<int64_t> jitter(0, backoff.count() / 2);
      auto delay = std::chrono::milliseconds(backoff.count() - backoff.count() / 2 + jitter(rng_));
      spdlog::debug("[agent] agent={} reconnecting to {} in {} ms", options_.agent_id, url_.ToString(),
                    delay.count());
      retry_timer_.expires_after(delay);
      boost::system::error_code ec;
      co_await retry_timer_.async_wait(net::redirect_error(use_awaitable, ec));
      backoff = std::min(backoff * 2, options_.backoff_max);
    }
    running_ = false;
  }

  // Connects (with the TLS handshake for https), says hello, waits for
  // welcome, then reads until the connection drops. Returns whether the
  // master welcomed this agent.
  awaitable<bool> RunSession(bool failing) {
    const bool secure = url_.scheme == "https";
    if (secure && !tls_) {
      if (!failing) spdlog::warn("[agent] agent={} cannot connect: {}", options_.agent_id, tls_error_);
      co_return false;
    }
    auto s = std::make_shared<LinkSession>(strand_, secure ? tls_.get() : nullptr);
    session_ = s;
    boost::system::error_code ec;
    auto fail = [&](const std::string& what) {
      if (!stopping_) {
        if (failing) {
          spdlog::debug("[agent] agent={} master {}: {}", options_.agent_id, url_.ToString(), what);
        } else {
          spdlog::warn("[agent] agent={} master {}: {} (retrying with backoff)", options_.agent_id,
                       url_.ToString(), what);
        }
      }
      CloseSession(*s);
    };
    auto& tcp_stream = s->tcp();

    auto endpoints =
        co_await resolver_.async_resolve(url_.host, url_.port, net::redirect_error(use_awaitable, ec));
    if (ec || stopping_) {
      fail("cannot resolve " + url_.host + ": " + ec.message());
      co_return false;
    }
    tcp_stream.expires_after(options_.connect_timeout);
    co_await tcp_stream.async_connect(endpoints, net::redirect_error(use_awaitable, ec));
    if (ec || stopping_) {
      fail("cannot connect: " + ec.message());
      co_return false;
    }
    // A report sent soon after another (a trial's exit after its start) must
    // not wait for the master's delayed ACK of the first (Nagle): the slot's
    // next trial waits on it.
    tcp_stream.socket().set_option(net::ip::tcp::no_delay(true), ec);
    std::string local_address = tcp_stream.socket().local_endpoint(ec).address().to_string();
    if (auto* secured = s->ws.next_layer().tls()) {
      auto& tls = *secured;
      if (Status st = PrepareClientTls(tls, url_.host); !st.ok()) {
        fail(st.message());
        co_return false;
      }
      tcp_stream.expires_after(options_.connect_timeout);
      co_await tls.async_handshake(net::ssl::stream_base::client, net::redirect_error(use_awaitable, ec));
      if (ec || stopping_) {
        fail(ClientHandshakeError(tls, ec, url_.ToString()).message());
        co_return false;
      }
    }

    if (credential_.empty() && !options_.cluster_token.empty()) {
      Status enrolled = co_await Enrol(*s, local_address);
      if (!enrolled.ok() || stopping_) {
        fail(enrolled.message());
        co_return false;
      }
    }
    s->ws.set_option(websocket::stream_base::decorator(
        [id = options_.agent_id, credential = credential_](websocket::request_type& req) {
          req.set(beast::http::field::user_agent, "ringagent");
          if (!credential.empty()) {
            req.set("X-Ring-Agent-Id", id);
            req.set(beast::http::field::authorization, "Bearer " + credential);
          }
        }));
    s->ws.read_message_max(kMaxIncomingMessage);
    websocket::response_type response;
    tcp_stream.expires_after(options_.connect_timeout);
    co_await s->ws.async_handshake(response, url_.host + ":" + url_.port, url_.path + "/api/v1/agents/ws",
                                   net::redirect_error(use_awaitable, ec));
    if (ec || stopping_) {
      if (ec == websocket::error::upgrade_declined) {
        std::string hint =
            response.result_int() != 401 ? ""
            : credential_.empty()
                ? " (no credential: give --token-file so the agent can enrol)"
                : " (the master refused this agent's credential: an admin removed it, or the master's "
                  "database is another; to enrol again, delete " +
                      options_.credential_file + " and start with --token-file)";
        fail("refused the agent connection: HTTP " + std::to_string(response.result_int()) + hint);
      } else {
        fail("WebSocket upgrade failed: " + ec.message());
      }
      co_return false;
    }
    s->ws.text(true);

    proto::Hello hello = callbacks_.make_hello(local_address);
    tcp_stream.expires_after(options_.connect_timeout);
    co_await s->ws.async_write(net::buffer(proto::Encode(hello)), net::redirect_error(use_awaitable, ec));
    beast::flat_buffer buffer;
    if (!ec) co_await s->ws.async_read(buffer, net::redirect_error(use_awaitable, ec));
    if (ec || stopping_) {
      fail("no welcome: " + ec.message());
      co_return false;
    }
    auto welcome = proto::Decode(beast::buffers_to_string(buffer.data()));
    if (!welcome.ok() || !std::holds_alternative<proto::Welcome>(*welcome)) {
      fail("answered hello with something other than welcome");
      co_return false;
    }
    const auto& w = std::get<proto::Welcome>(*welcome);
    s->interval = std::chrono::milliseconds(std::max<int64_t>(w.heartbeat_interval_ms, 10));
    // From here Beast's own timeouts apply: pings when idle, a dead peer closes the stream.
    tcp_stream.expires_never();
    auto idle = std::clamp(std::chrono::milliseconds(3 * std::max<int64_t>(w.heartbeat_timeout_ms, 1)),
                           std::chrono::milliseconds(3000), std::chrono::milliseconds(60000));
    s->ws.set_option(websocket::stream_base::timeout{std::chrono::seconds(5), idle, true});
    s->welcomed = true;
    connected_ = true;
    ++sessions_;
    spdlog::info("[agent] agent={} connected to master {} (heartbeat every {} ms, {} message(s) queued)",
                 options_.agent_id, url_.ToString(), s->interval.count(), queue_.size());

    auto self = shared_from_this();
    net::co_spawn(
        strand_, [self, s] { return self->Writer(s); }, net::detached);
    net::co_spawn(
        strand_, [self, s] { return self->Heartbeats(s); }, net::detached);

    while (!s->closed) {
      buffer.clear();
      co_await s->ws.async_read(buffer, net::redirect_error(use_awaitable, ec));
      if (ec) break;
      Dispatch(beast::buffers_to_string(buffer.data()));
    }
    connected_ = false;
    if (!s->closed && !stopping_) {
      spdlog::warn("[agent] agent={} lost the master connection: {}", options_.agent_id, ec.message());
    }
    CloseSession(*s);
    co_return true;
  }

  // POST /api/v1/agents/enrol on the connection's stream, before its
  // upgrade: the cluster token buys this id its credential, which is kept
  // (on_enrolled) before anything uses it.
  awaitable<Status> Enrol(LinkSession& s, const std::string& local_address) {
    namespace http = beast::http;
    const proto::Hello hello = callbacks_.make_hello(local_address);
    http::request<http::string_body> req{http::verb::post, url_.path + "/api/v1/agents/enrol", 11};
    req.set(http::field::host, url_.host + ":" + url_.port);
    req.set(http::field::user_agent, "ringagent");
    req.set(http::field::authorization, "Bearer " + options_.cluster_token);
    req.set(http::field::content_type, "application/json");
    req.keep_alive(true);
    req.body() =
        nlohmann::json{{"agent_id", options_.agent_id}, {"pool", hello.pool}, {"slots", hello.slots.size()}}
            .dump();
    req.prepare_payload();
    boost::system::error_code ec;
    s.tcp().expires_after(options_.connect_timeout);
    co_await http::async_write(s.ws.next_layer(), req, net::redirect_error(use_awaitable, ec));
    if (ec) co_return Unavailable("enrolment failed: " + ec.message());
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    co_await http::async_read(s.ws.next_layer(), buffer, res, net::redirect_error(use_awaitable, ec));
    if (ec) co_return Unavailable("enrolment failed: " + ec.message());
    auto body = nlohmann::json::parse(res.body(), nullptr, false);
    const std::string said = body.is_object() && body.contains("error") && body["error"].is_object()
                                 ? body["error"].value("message", "")
                                 : "";
    if (res.result_int() != 201 || !body.is_object() || !body["credential"].is_string())
      co_return Unavailable("refused the enrolment of agent " + options_.agent_id + ": HTTP " +
                            std::to_string(res.result_int()) + (said.empty() ? "" : ": " + said));
    const std::string credential = body["credential"].get<std::string>();
    if (callbacks_.on_enrolled)
      if (Status kept = callbacks_.on_enrolled(credential); !kept.ok()) co_return kept;
    credential_ = credential;
    spdlog::info("[agent] agent={} enrolled with master {}; its credential is in {}", options_.agent_id,
                 url_.ToString(), options_.credential_file);
    co_return Status::Ok();
  }

  void Dispatch(const std::string& text) {
    auto message = proto::Decode(text);
    if (!message.ok()) {
      spdlog::warn("[agent] agent={} ignoring a malformed message from the master: {}", options_.agent_id,
                   message.status().message());
      return;
    }
    if (auto* start = std::get_if<proto::Start>(&*message)) {
      if (callbacks_.on_start) callbacks_.on_start(std::move(*start));
    } else if (auto* kill = std::get_if<proto::Kill>(&*message)) {
      if (callbacks_.on_kill) callbacks_.on_kill(std::move(*kill));
    } else if (std::holds_alternative<proto::TerminalOpen>(*message) ||
               std::holds_alternative<proto::TerminalInput>(*message) ||
               std::holds_alternative<proto::TerminalResize>(*message) ||
               std::holds_alternative<proto::TerminalClose>(*message)) {
      if (callbacks_.on_terminal) callbacks_.on_terminal(std::move(*message));
    } else if (auto* welcome = std::get_if<proto::Welcome>(&*message)) {
      if (session_)
        session_->interval = std::chrono::milliseconds(std::max<int64_t>(welcome->heartbeat_interval_ms, 10));
    } else {
      spdlog::warn("[agent] agent={} ignoring an unexpected message from the master: {}", options_.agent_id,
                   text.substr(0, 100));
    }
  }

  // The only coroutine that writes to the socket: heartbeats first, then the queue.
  awaitable<void> Writer(std::shared_ptr<LinkSession> s) {
    boost::system::error_code ec;
    while (!s->closed) {
      std::string frame;
      bool from_queue = false;
      if (s->heartbeat_due) {
        s->heartbeat_due = false;
        frame = proto::Encode(proto::Heartbeat{});
      } else if (!queue_.empty()) {
        frame = queue_.BeginFront();
        from_queue = true;
      } else if (s->close_requested) {
        co_await s->ws.async_close(websocket::close_code::normal, net::redirect_error(use_awaitable, ec));
        break;
      } else {
        s->wake.expires_at(net::steady_timer::time_point::max());
        co_await s->wake.async_wait(net::redirect_error(use_awaitable, ec));
        continue;
      }
      co_await s->ws.async_write(net::buffer(frame), net::redirect_error(use_awaitable, ec));
      if (from_queue) {
        queue_.EndFront(!ec);
        queued_ = queue_.size();
      }
      if (ec) {
        spdlog::debug("[agent] agent={} write to master failed: {}", options_.agent_id, ec.message());
        break;
      }
    }
    CloseSession(*s);
  }

  awaitable<void> Heartbeats(std::shared_ptr<LinkSession> s) {
    boost::system::error_code ec;
    while (!s->closed) {
      s->heartbeat.expires_after(s->interval);
      co_await s->heartbeat.async_wait(net::redirect_error(use_awaitable, ec));
      if (s->closed) break;
      s->heartbeat_due = true;
      s->wake.cancel();
    }
  }

  void CloseSession(LinkSession& s) {
    if (s.closed) return;
    s.closed = true;
    s.wake.cancel();
    s.heartbeat.cancel();
    boost::system::error_code ec;
    s.tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
    s.tcp().close();
    if (s.welcomed) connected_ = false;
  }

  awaitable<void> StopFlow() {
    retry_timer_.cancel();
    resolver_.cancel();
    net::steady_timer poll(strand_);
    boost::system::error_code ec;
    auto s = session_;
    if (s && !s->closed) {
      if (!s->welcomed) {
        CloseSession(*s);  // still connecting: abandon the attempt
      } else {
        s->close_requested = true;
        s->wake.cancel();
      }
    }
    // The writer sends what is queued, then closes; give up after flush_timeout.
    auto deadline = std::chrono::steady_clock::now() + options_.flush_timeout;
    while (s && !s->closed && std::chrono::steady_clock::now() < deadline) {
      poll.expires_after(kPollStep);
      co_await poll.async_wait(net::redirect_error(use_awaitable, ec));
    }
    if (s) CloseSession(*s);
    while (running_) {
      poll.expires_after(kPollStep);
      co_await poll.async_wait(net::redirect_error(use_awaitable, ec));
    }
    if (!queue_.empty())
      spdlog::warn("[agent] agent={} stopped with {} message(s) not delivered to the master",
                   options_.agent_id, queue_.size());
    auto waiters = std::move(stop_waiters_);
    stop_waiters_.clear();
    for (auto& done : waiters)
      if (done) done();
  }

  Strand strand_;
  Options options_;
  std::string credential_ = options_.credential;  // strand: set at enrolment
  Callbacks callbacks_;
  Url url_;
  std::shared_ptr<net::ssl::context> tls_;  // https masters; shared by every connection
  std::string tls_error_;                   // why tls_ could not be made (a bad --ca-file)
  OutboundQueue queue_;                     // strand
  std::shared_ptr<LinkSession> session_;    // strand: the current attempt
  net::steady_timer retry_timer_;
  tcp::resolver resolver_;
  std::mt19937_64 rng_;
  bool stopping_ = false;                            // strand
  bool running_ = false;                             // strand: Run() has not returned
  std::vector<std::function<void()>> stop_waiters_;  // strand
};

MasterLink::MasterLink(net::io_context& io, Options options, Callbacks callbacks)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(callbacks))) {}

MasterLink::~MasterLink() = default;

void MasterLink::Start() {
  impl_->Start();
}
void MasterLink::Send(proto::Message message) {
  impl_->Send(std::move(message));
}
void MasterLink::Stop(std::function<void()> done) {
  impl_->Stop(std::move(done));
}
bool MasterLink::connected() const {
  return impl_->connected_.load();
}
int64_t MasterLink::sessions() const {
  return impl_->sessions_.load();
}
size_t MasterLink::queued() const {
  return impl_->queued_.load();
}

}  // namespace ring
