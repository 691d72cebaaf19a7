#pragma once
// A raw TCP connection to a master on 127.0.0.1, for bytes no HTTP or TLS
// client would send (garbage, truncated requests, silent connections).
#include <sys/types.h>

#include <cstddef>
#include <string>

namespace ring::testing {

class RawConnection {
 public:
  // Connects to 127.0.0.1:port, from `source` (an IPv4 address such as
  // 127.0.0.2, bound before connecting) when given; reads and writes give up
  // after 5 s.
  explicit RawConnection(int port, const std::string& source = "");
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  // Sends all of `data`; false when the peer closed or 5 s passed.
  bool Send(const std::string& data);
  void CloseWrite();
  // Waits for exactly `n` bytes (fewer when the peer closes or 5 s pass).
  ssize_t Read(char* buf, size_t n);
  // Waits for at least one byte and returns what has come, up to `n` (0 when
  // the peer closed, -1 after 5 s of silence).
  ssize_t ReadSome(char* buf, size_t n);
  // Everything the peer sends until it closes (or 5 s of silence).
  std::string ReadAll();
  // Reads until the peer closes or resets; false when 5 s pass in silence first.
  bool ReadUntilClosed();

 private:
  int fd_;
  bool connected_ = false;
};

// The port of a URL such as "http://127.0.0.1:4711".
int PortOf(const std::string& url);

}  // namespace ring::testing
