#pragma once
// Where `ring user login` keeps its sign-in tokens: one per master URL in
// ${XDG_CONFIG_HOME:-~/.config}/ring/tokens.json, a file only its owner may
// read or write (0600, in a 0700 folder), replaced atomically. RING_TOKEN,
// when set, wins over the file (for scripts and CI).
#include <optional>
#include <string>

#include "common/status.h"

namespace ring::cli {

struct SavedToken {
  std::string username;
  std::string token;
  std::string expires_at;
};

std::string CredentialsPath();
// The token for `master_url`: RING_TOKEN, else the saved one, else nullopt.
std::optional<std::string> TokenFor(const std::string& master_url);
std::optional<SavedToken> LoadToken(const std::string& master_url);
Status SaveToken(const std::string& master_url, const SavedToken& token);
Status ForgetToken(const std::string& master_url);

}  // namespace ring::cli
