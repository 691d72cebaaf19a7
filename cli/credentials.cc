#include "cli/credentials.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ring::cli {
namespace {

namespace fs = std::filesystem;

nlohmann::json ReadAll() {
  std::ifstream in(CredentialsPath());
  if (!in) return nlohmann::json::object();
  std::stringstream text;
  text << in.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

Status WriteAll(const nlohmann::json& all) {
  const fs::path path = CredentialsPath();
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Internal("cannot create " + path.parent_path().string() + ": " + ec.message());
  ::chmod(path.parent_path().c_str(), 0700);
  const std::string tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("cannot write " + tmp);
  const std::string text = all.dump(2) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                       ::fchmod(fd, 0600) == 0 && ::fsync(fd) == 0;
  ::close(fd);
  if (!written) return Internal("cannot write " + tmp);
  fs::rename(tmp, path, ec);
  if (ec) return Internal("cannot replace " + path.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

std::string CredentialsPath() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0')
    return std::string(xdg) + "/ring/tokens.json";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.config/ring/tokens.json";
}

std::optional<SavedToken> LoadToken(const std::string& master_url) {
  const auto all = ReadAll();
  auto it = all.find(master_url);
  if (it == all.end() || !it->is_object() || !(*it)["token"].is_string()) return std::nullopt;
  return SavedToken{it->value("username", ""), (*it)["token"].get<std::string>(),
                    it->value("expires_at", "")};
}

std::optional<std::string> TokenFor(const std::string& master_url) {
  if (const char* env = std::getenv("RING_TOKEN"); env != nullptr && *env != '\0') return std::string(env);
  auto saved = LoadToken(master_url);
  if (!saved) return std::nullopt;
  return saved->token;
}

Status SaveToken(const std::string& master_url, const SavedToken& token) {
  auto all = ReadAll();
  all[master_url] = {{"username", token.username}, {"token", token.token}, {"expires_at", token.expires_at}};
  return WriteAll(all);
}

Status ForgetToken(const std::string& master_url) {
  auto all = ReadAll();
  if (!all.contains(master_url)) return Status::Ok();
  all.erase(master_url);
  return WriteAll(all);
}

}  // namespace ring::cli
