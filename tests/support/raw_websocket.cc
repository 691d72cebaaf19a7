#include "tests/support/raw_websocket.h"

#include <cstdint>

namespace ring::testing {

RawWebSocket::RawWebSocket(int port, const std::string& target,
                           const std::map<std::string, std::string>& headers)
    : c_(port) {
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                        "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  if (!c_.Send(request + "\r\n")) return;
  std::string head;
  char ch;
  while (head.find("\r\n\r\n") == std::string::npos && c_.Read(&ch, 1) == 1) head += ch;
  status_ = head.size() >= 12 ? std::stoi(head.substr(9, 3)) : 0;
}

void RawWebSocket::Send(int opcode, const std::string& text) {
  std::string frame = {static_cast<char>(0x80 | opcode)};
  if (text.size() < 126) {
    frame += static_cast<char>(0x80 | text.size());
  } else {
    frame += static_cast<char>(0x80 | 126);
    frame += static_cast<char>((text.size() >> 8) & 0xff);
    frame += static_cast<char>(text.size() & 0xff);
  }
  const char mask[4] = {7, 1, 4, 2};
  frame.append(mask, 4);
  for (size_t i = 0; i < text.size(); ++i) frame += static_cast<char>(text[i] ^ mask[i % 4]);
  c_.Send(frame);
}

std::optional<std::string> RawWebSocket::ReadFrame() {
  for (;;) {
    unsigned char h[2];
    if (c_.Read(reinterpret_cast<char*>(h), 2) != 2) return std::nullopt;
    uint64_t n = h[1] & 0x7f;
    if (n >= 126) {
      unsigned char ext[8];
      const size_t bytes = n == 126 ? 2 : 8;
      if (c_.Read(reinterpret_cast<char*>(ext), bytes) != static_cast<ssize_t>(bytes)) return std::nullopt;
      n = 0;
      for (size_t i = 0; i < bytes; ++i) n = (n << 8) | ext[i];
    }
    std::string payload(n, '\0');
    if (n > 0 && c_.Read(payload.data(), n) != static_cast<ssize_t>(n)) return std::nullopt;
    const int opcode = h[0] & 0x0f;
    if (opcode == 8) return std::nullopt;
    if (opcode == 1 || opcode == 2) return payload;
  }
}

}  // namespace ring::testing
