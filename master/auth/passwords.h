#pragma once
// Password hashing with Argon2id (libsodium's crypto_pwhash_str: a random
// salt and the cost parameters are kept in the hash string itself).
// Hashing takes about a tenth of a second and 64 MiB on purpose: keep it off
// the network threads.
#include <string>
#include <string_view>

#include "common/status.h"

namespace ring {

// Passwords have 8 to 1024 bytes; the error names the rule broken.
Status CheckPasswordRules(std::string_view password);
Result<std::string> HashPassword(std::string_view password);
// True when `password` matches `hash`; false for a wrong password or a hash
// that is not an Argon2id string.
bool VerifyPassword(std::string_view password, const std::string& hash);
// A random password of 24 letters and digits (the admin's at first start).
std::string NewPassword();

}  // namespace ring
