#include "tests/support/raw_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

namespace ring::testing {

RawConnection::RawConnection(int port, const std::string& source) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
  if (!source.empty()) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    if (inet_pton(AF_INET, source.c_str(), &local.sin_addr) != 1 ||
        bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0)
      return;  // not connected
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  timeval tv{5, 0};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

RawConnection::~RawConnection() {
  close(fd_);
}

bool RawConnection::Send(const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void RawConnection::CloseWrite() {
  shutdown(fd_, SHUT_WR);
}

ssize_t RawConnection::Read(char* buf, size_t n) {
  return recv(fd_, buf, n, MSG_WAITALL);
}

ssize_t RawConnection::ReadSome(char* buf, size_t n) {
  return recv(fd_, buf, n, 0);
}

std::string RawConnection::ReadAll() {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

bool RawConnection::ReadUntilClosed() {
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
}

int PortOf(const std::string& url) {
  return std::stoi(url.substr(url.rfind(':') + 1));
}

}  // namespace ring::testing
