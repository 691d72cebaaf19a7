#pragma once
// A WebSocket client on a raw connection to 127.0.0.1, for tests: the
// upgrade request carries exactly the headers the test gives (a cookie, an
// Origin, a bearer token), frames are masked as a client's must be, and
// the server's frames are read one at a time.
#include <map>
#include <optional>
#include <string>

#include "tests/support/raw_connection.h"

namespace ring::testing {

class RawWebSocket {
 public:
  // Sends the upgrade for `target` with `headers` (Host, Upgrade, Connection
  // and the key are added) and reads the answer's header.
  RawWebSocket(int port, const std::string& target, const std::map<std::string, std::string>& headers);
  // The answer's status: 101 when upgraded, 0 when there was none.
  int status() const { return status_; }
  // After a refusal: its body (the master's error JSON), read until the
  // server closes (or 5 s of silence).
  std::string RefusalBody() { return status_ == 101 ? "" : c_.ReadAll(); }
  void SendText(const std::string& text) { Send(0x1, text); }
  void SendBinary(const std::string& bytes) { Send(0x2, bytes); }
  // The next text or binary frame's payload (pings are skipped); nullopt at
  // a close, or when nothing came for 5 s.
  std::optional<std::string> ReadFrame();

 private:
  void Send(int opcode, const std::string& payload);
  RawConnection c_;
  int status_ = 0;
};

}  // namespace ring::testing
