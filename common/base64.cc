// Base64 (RFC 4648, standard alphabet, with padding) for model definitions in
// JSON bodies. Declared in common/archive.h.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/archive.h"

namespace ring {

std::string Base64Encode(std::string_view data) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(data[i]) << 16) | (static_cast<uint8_t>(data[i + 1]) << 8) |
                       static_cast<uint8_t>(data[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < data.size()) {
    uint32_t v = static_cast<uint8_t>(data[i]) << 16;
    if (i + 1 < data.size()) v |= static_cast<uint8_t>(data[i + 1]) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < data.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

namespace {

int Sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::string Describe(char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return std::string("'") + c + "'";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

}  // namespace

// Line breaks and spaces (as `base64` wraps its output) are skipped; any other
// character outside the alphabet, or padding anywhere but the end, is refused.
Result<std::string> Base64Decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t group = 0;
  int filled = 0;  // sextets in `group`
  int pad = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (IsSpace(c)) continue;
    if (c == '=') {
      if (filled + pad < 2)
        return InvalidArgument("base64 text has padding too early, at offset " + std::to_string(i));
      if (++pad + filled > 4)
        return InvalidArgument("base64 text has too much padding, at offset " + std::to_string(i));
      continue;
    }
    const int v = Sextet(c);
    if (v < 0)
      return InvalidArgument("base64 text has an invalid character " + Describe(c) + " at offset " +
                             std::to_string(i));
    if (pad > 0)
      return InvalidArgument("base64 text goes on after its padding, at offset " + std::to_string(i));
    group = (group << 6) | static_cast<uint32_t>(v);
    if (++filled == 4) {
      out += static_cast<char>(group >> 16);
      out += static_cast<char>((group >> 8) & 255);
      out += static_cast<char>(group & 255);
      group = 0;
      filled = 0;
    }
  }
  if (filled + pad != 0 && filled + pad != 4)
    return InvalidArgument("base64 text is truncated: its length is not a multiple of 4");
  if (filled == 2) out += static_cast<char>(group >> 4);
  if (filled == 3) {
    out += static_cast<char>(group >> 10);
    out += static_cast<char>((group >> 2) & 255);
  }
  return out;
}

}  // namespace ring
