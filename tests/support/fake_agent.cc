#include "tests/support/fake_agent.h"

#include <utility>  // before Asio

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

namespace ring::testing {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

constexpr auto kWait = std::chrono::seconds(5);

}  // namespace

EnrolAnswer EnrolAgent(int port, const std::string& token, const nlohmann::json& body) {
  net::io_context ioc;
  beast::tcp_stream stream(ioc);
  beast::error_code ec;
  stream.expires_after(kWait);
  stream.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)), ec);
  if (ec) return {};
  http::request<http::string_body> req{http::verb::post, "/api/v1/agents/enrol", 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
  req.body() = body.dump();
  req.prepare_payload();
  EnrolAnswer answer;
  http::async_write(stream, req, [&](beast::error_code e, size_t) { ec = e; });
  ioc.run_for(kWait);
  if (ec) return {};
  ioc.restart();
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::async_read(stream, buffer, res, [&](beast::error_code e, size_t) { ec = e; });
  ioc.run_for(kWait);
  if (ec) return {};
  answer.status = res.result_int();
  answer.body = nlohmann::json::parse(res.body(), nullptr, false);
  return answer;
}

struct FakeAgent::Impl {
  net::io_context ioc;
  websocket::stream<beast::tcp_stream> ws{ioc};
  beast::flat_buffer buffer;
};

std::map<std::string, std::string> FakeAgent::Credentials(const std::string& agent_id,
                                                          const std::string& credential) {
  return {{"X-Ring-Agent-Id", agent_id}, {"Authorization", "Bearer " + credential}};
}

FakeAgent::FakeAgent(int port, const std::map<std::string, std::string>& headers)
    : impl_(std::make_unique<Impl>()) {
  auto& tcp_stream = beast::get_lowest_layer(impl_->ws);
  beast::error_code ec;
  tcp_stream.expires_after(kWait);
  tcp_stream.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)),
                     ec);
  if (ec) return;
  impl_->ws.set_option(websocket::stream_base::decorator([headers](websocket::request_type& req) {
    for (const auto& [k, v] : headers) req.set(k, v);
  }));
  websocket::response_type response;
  bool done = false;
  impl_->ws.async_handshake(response, "127.0.0.1", "/api/v1/agents/ws", [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  impl_->ioc.run_for(kWait);
  if (!done) return;
  status_ = response.result_int();
  body_ = response.body();
  if (ec && status_ == 101) status_ = 0;
  tcp_stream.expires_never();
}

FakeAgent::~FakeAgent() {
  beast::error_code ec;
  beast::get_lowest_layer(impl_->ws).socket().close(ec);
}

bool FakeAgent::Send(const proto::Message& message) {
  if (!upgraded() || closed_) return false;
  impl_->ioc.restart();
  beast::error_code ec;
  bool done = false;
  const std::string text = proto::Encode(message);
  impl_->ws.text(true);
  impl_->ws.async_write(net::buffer(text), [&](beast::error_code e, size_t) {
    ec = e;
    done = true;
  });
  impl_->ioc.run_for(kWait);
  if (!done || ec) closed_ = true;
  return !closed_;
}

std::optional<proto::Message> FakeAgent::ReadOne(std::chrono::milliseconds timeout) {
  if (!upgraded() || closed_) return std::nullopt;
  impl_->ioc.restart();
  bool done = false;
  beast::error_code ec;
  impl_->ws.async_read(impl_->buffer, [&](beast::error_code e, size_t) {
    ec = e;
    done = true;
  });
  impl_->ioc.run_for(timeout);
  if (!done) {
    // A WebSocket read cannot be abandoned halfway: this ends the connection.
    beast::get_lowest_layer(impl_->ws).cancel();
    impl_->ioc.restart();
    impl_->ioc.run_for(std::chrono::seconds(1));
    closed_ = true;
    return std::nullopt;
  }
  if (ec) {
    closed_ = true;
    return std::nullopt;
  }
  auto message = proto::Decode(beast::buffers_to_string(impl_->buffer.data()));
  impl_->buffer.consume(impl_->buffer.size());
  if (!message.ok()) return std::nullopt;
  return std::move(*message);
}

bool FakeAgent::Hello(const proto::Hello& hello) {
  if (!Send(hello)) return false;
  const auto until = std::chrono::steady_clock::now() + kWait;
  while (!closed_ && std::chrono::steady_clock::now() < until) {
    auto m = ReadOne(
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()));
    if (m && std::holds_alternative<proto::Welcome>(*m)) return true;
  }
  return false;
}

}  // namespace ring::testing
