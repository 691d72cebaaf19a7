#pragma once
// Secrets handed to trial processes. Only their SHA-256 is stored.
#include <string>
#include <string_view>

namespace ring {

std::string NewToken();                                            // 32 random bytes, hex
std::string HashToken(std::string_view token);                     // SHA-256, hex
bool TokenMatches(std::string_view token, std::string_view hash);  // constant time

}  // namespace ring
