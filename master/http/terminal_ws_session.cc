#include "master/http/terminal_ws_session.h"

#include <deque>
#include <memory>

#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include "master/interactive/terminal_relay.h"

namespace ring {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using net::use_awaitable;

constexpr size_t kMaxIncomingFrame = 64 * 1024;

class TerminalWsSession : public std::enable_shared_from_this<TerminalWsSession> {
 public:
  TerminalWsSession(AnyStream stream, TerminalRelay& relay, TerminalAdmission admission)
      : ws_(std::move(stream)), relay_(relay), admission_(std::move(admission)) {}

  auto Executor() { return ws_.get_executor(); }

  static net::awaitable<void> Run(std::shared_ptr<TerminalWsSession> self,
                                  beast::http::request<beast::http::string_body> request) {
    beast::error_code ec;
    self->ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    self->ws_.read_message_max(kMaxIncomingFrame);
    co_await self->ws_.async_accept(request, net::redirect_error(use_awaitable, ec));
    if (ec) co_return;
    self->ws_.binary(true);
    std::weak_ptr<TerminalWsSession> weak = self;
    auto session = self->relay_.Open(self->admission_.agent_id, self->admission_.allocation_id,
                                     self->admission_.rank, self->admission_.rows, self->admission_.cols,
                                     {[weak](std::string bytes) {
                                        if (auto s = weak.lock()) s->Queue(false, std::move(bytes));
                                      },
                                      [weak](std::string reason) {
                                        if (auto s = weak.lock()) s->EndFromAgent(std::move(reason));
                                      }});
    if (!session.ok()) {
      self->EndFromAgent("the terminal cannot be reached: " + session.status().message());
      co_return;
    }
    self->session_ = *session;
    spdlog::info("[terminal] {} opened a terminal of allocation {} on {}", self->admission_.username,
                 self->admission_.allocation_id, self->admission_.agent_id);
    beast::flat_buffer buffer;
    while (true) {
      co_await self->ws_.async_read(buffer, net::redirect_error(use_awaitable, ec));
      if (ec) break;
      std::string data = beast::buffers_to_string(buffer.data());
      buffer.consume(buffer.size());
      if (self->ws_.got_binary()) {
        self->relay_.Input(self->session_, std::move(data));
        continue;
      }
      const auto control = nlohmann::json::parse(data, nullptr, false);
      if (control.is_object() && control.value("type", "") == "resize") {
        const int rows = control.value("rows", 0);
        const int cols = control.value("cols", 0);
        if (rows >= 1 && rows <= 1000 && cols >= 1 && cols <= 1000)
          self->relay_.Resize(self->session_, rows, cols);
      }
    }
    // The client left (or its connection broke): its session ends, the shell runs on.
    if (!self->ended_) self->relay_.Close(self->session_);
    self->ended_ = true;
  }

 private:
  // On any thread: a frame for the client, in order.
  void Queue(bool text, std::string frame) {
    net::post(ws_.get_executor(), [self = shared_from_this(), text, frame = std::move(frame)]() mutable {
      if (self->closing_) return;
      self->backlog_ += frame.size();
      if (self->backlog_ > TerminalWsAcceptor::kMaxBacklogBytes) {
        spdlog::warn("[terminal] {}: the client reads too slowly, closing", self->admission_.username);
        self->closing_ = true;
        self->relay_.Close(self->session_);
        self->ended_ = true;
        self->CloseNow(websocket::close_code::try_again_later);
        return;
      }
      self->outbox_.emplace_back(text, std::move(frame));
      self->StartWriting();
    });
  }

  // The agent ended it (the shell exited, the agent is gone): say why, then close.
  void EndFromAgent(std::string reason) {
    net::post(ws_.get_executor(), [self = shared_from_this(), reason = std::move(reason)]() mutable {
      self->ended_ = true;
      if (self->closing_) return;
      self->outbox_.emplace_back(true, nlohmann::json{{"type", "closed"}, {"reason", reason}}.dump());
      self->close_after_ = true;
      self->StartWriting();
    });
  }

  void StartWriting() {
    if (writing_) return;
    writing_ = true;
    net::co_spawn(ws_.get_executor(), WriteLoop(shared_from_this()), net::detached);
  }

  static net::awaitable<void> WriteLoop(std::shared_ptr<TerminalWsSession> self) {
    beast::error_code ec;
    while (!self->outbox_.empty() && !self->closing_) {
      auto [text, frame] = std::move(self->outbox_.front());
      self->outbox_.pop_front();
      self->backlog_ -= std::min(self->backlog_, frame.size());
      self->ws_.text(text);
      co_await self->ws_.async_write(net::buffer(frame), net::redirect_error(use_awaitable, ec));
      if (ec) {
        self->closing_ = true;
        break;
      }
    }
    self->writing_ = false;
    if (self->close_after_ && !self->closing_) {
      self->closing_ = true;
      self->CloseNow(websocket::close_code::normal);
    }
  }

  void CloseNow(websocket::close_code code) {
    ws_.async_close(code, [self = shared_from_this()](beast::error_code) {});
  }

  websocket::stream<AnyStream> ws_;
  TerminalRelay& relay_;
  const TerminalAdmission admission_;
  std::string session_;
  std::deque<std::pair<bool, std::string>> outbox_;  // strand
  size_t backlog_ = 0;                               // strand: bytes in outbox_
  bool writing_ = false;                             // strand
  bool closing_ = false;                             // strand
  bool close_after_ = false;                         // strand: close once the outbox is written
  bool ended_ = false;                               // the session is over on the relay's side
};

}  // namespace

Result<TerminalAdmission> TerminalWsAcceptor::Admit(
    const beast::http::request<beast::http::string_body>& request, const std::string& peer) {
  auto admission = admit_(request, peer);
  if (!admission.ok()) return admission;
  const std::string_view target = request.target();
  const size_t query = target.find('?');
  admission->rows = 24;
  admission->cols = 80;
  if (query == std::string_view::npos) return admission;
  std::string_view rest = target.substr(query + 1);
  while (!rest.empty()) {
    const std::string_view pair = rest.substr(0, rest.find('&'));
    rest = pair.size() < rest.size() ? rest.substr(pair.size() + 1) : std::string_view{};
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = pair.substr(0, eq);
    int value = 0;
    const std::string_view text = pair.substr(eq + 1);
    if (text.empty() || text.size() > 4) continue;
    for (char c : text) value = c >= '0' && c <= '9' ? value * 10 + (c - '0') : -1000000;
    if (value < 1 || value > 1000) continue;
    if (name == "rows") admission->rows = value;
    if (name == "cols") admission->cols = value;
  }
  return admission;
}

void TerminalWsAcceptor::Accept(AnyStream stream, beast::http::request<beast::http::string_body> request,
                                TerminalAdmission admission) {
  auto session = std::make_shared<TerminalWsSession>(std::move(stream), relay_, std::move(admission));
  auto executor = session->Executor();
  net::co_spawn(executor, TerminalWsSession::Run(session, std::move(request)), net::detached);
}

}  // namespace ring
