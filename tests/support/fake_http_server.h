#pragma once
// FakeHttpServer: a tiny blocking HTTP/1.1 server on 127.0.0.1:0 for unit
// tests of the CLI and the trial runtime. One background thread accepts one
// connection at a time, reads one request, answers with the handler's
// response and closes the connection. Requests are recorded for assertions.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/held_port.h"

namespace ring::testing {

struct FakeRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

struct FakeResponse {
  int status = 200;
  std::string body = "{}";
};

class FakeHttpServer {
 public:
  using Handler = std::function<FakeResponse(const FakeRequest&)>;

  explicit FakeHttpServer(Handler handler) : handler_(std::move(handler)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 16);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeHttpServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<FakeRequest> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0) continue;
      FakeRequest req;
      if (ReadRequest(conn, req)) {
        {
          std::lock_guard lock(mutex_);
          requests_.push_back(req);
        }
        FakeResponse res = handler_(req);
        std::string out =
            "HTTP/1.1 " + std::to_string(res.status) + " X\r\nContent-Type: application/json\r\n" +
            "Content-Length: " + std::to_string(res.body.size()) + "\r\nConnection: close\r\n\r\n" + res.body;
        size_t sent = 0;
        while (sent < out.size()) {
          ssize_t n = ::send(conn, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
          if (n <= 0) break;
          sent += static_cast<size_t>(n);
        }
      }
      ::close(conn);
    }
  }

  // Reads one request with a 5 s budget per read; false on a malformed or slow one.
  static bool ReadRequest(int conn, FakeRequest& req) {
    std::string data;
    auto read_more = [&] {
      pollfd p{conn, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) return false;
      char buf[65536];
      ssize_t n = ::recv(conn, buf, sizeof buf, 0);
      if (n <= 0) return false;
      data.append(buf, static_cast<size_t>(n));
      return true;
    };
    size_t header_end;
    while ((header_end = data.find("\r\n\r\n")) == std::string::npos)
      if (!read_more()) return false;
    std::string head = data.substr(0, header_end);
    size_t line_end = head.find("\r\n");
    std::string first = head.substr(0, line_end);
    auto sp1 = first.find(' ');
    auto sp2 = first.find(' ', sp1 + 1);
    req.method = first.substr(0, sp1);
    req.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t end = head.find("\r\n", pos);
      if (end == std::string::npos) end = head.size();
      std::string line = head.substr(pos, end - pos);
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        req.headers[name] = value;
      }
      pos = end + 2;
    }
    size_t length = req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
    while (data.size() < header_end + 4 + length)
      if (!read_more()) return false;
    req.body = data.substr(header_end + 4, length);
    return true;
  }

  Handler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<FakeRequest> requests_;
  std::thread thread_;
};

}  // namespace ring::testing
