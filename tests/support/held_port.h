#pragma once
// A TCP port of 127.0.0.1 that a test holds (bound, never listening) for as
// long as the HeldPort lives. A client connecting to it is refused, and the
// kernel gives it to no other socket meanwhile: none that binds port 0 (a
// server of a test running alongside, one of the listening sockets a Gloo
// group connects through) and none that connects. A port bound and closed
// again is free at once, and a client meant to be refused may reach whatever
// took it; a server taking it may get connections meant for another.
//
// With kServerMayBind, a server that sets SO_REUSEADDR (the master does) can
// still bind and listen on the port, so a master restarted on its port keeps
// it between its runs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace ring::testing {

class HeldPort {
 public:
  enum class Use { kRefuseConnections, kServerMayBind };

  explicit HeldPort(Use use = Use::kRefuseConnections)
      : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    const int on = 1;
    if (use == Use::kServerMayBind) ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      const std::string why = std::strerror(errno);
      ::close(fd_);
      throw std::runtime_error("cannot hold a port of 127.0.0.1: " + why);
    }
    port_ = ntohs(addr.sin_port);
  }
  ~HeldPort() { ::close(fd_); }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;

  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

}  // namespace ring::testing
