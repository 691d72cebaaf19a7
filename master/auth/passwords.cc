#include "master/auth/passwords.h"

#include <sodium.h>

#include <stdexcept>

namespace ring {
namespace {

void InitSodium() {
  static const bool ok = sodium_init() >= 0;
  if (!ok) throw std::runtime_error("libsodium cannot be initialised");
}

}  // namespace

Status CheckPasswordRules(std::string_view password) {
  if (password.size() < 8) return InvalidArgument("password must have at least 8 characters");
  if (password.size() > 1024) return InvalidArgument("password must have at most 1024 bytes");
  return Status::Ok();
}

Result<std::string> HashPassword(std::string_view password) {
  InitSodium();
  if (Status s = CheckPasswordRules(password); !s.ok()) return s;
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str_alg(out, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                            crypto_pwhash_MEMLIMIT_INTERACTIVE, crypto_pwhash_ALG_ARGON2ID13) != 0)
    return Internal("hashing a password ran out of memory");
  return std::string(out);
}

bool VerifyPassword(std::string_view password, const std::string& hash) {
  InitSodium();
  if (hash.rfind("$argon2id$", 0) != 0) return false;
  return crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
}

std::string NewPassword() {
  InitSodium();
  static constexpr char kAlphabet[] = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  std::string out(24, ' ');
  for (char& c : out) c = kAlphabet[randombytes_uniform(sizeof kAlphabet - 1)];
  return out;
}

}  // namespace ring
