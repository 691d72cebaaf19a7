#include "agent/agent_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

namespace ring {
namespace {

constexpr size_t kMaxFileBytes = 64 * 1024;

// Opens `path` without following a final link and reads it whole, after
// checking that group and others have no access.
Result<std::string> ReadPrivateFile(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return InvalidArgument(what + " " + path + " cannot be read: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(what + " " + path + " is not a regular file");
  }
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    ::close(fd);
    return InvalidArgument(what + " " + path +
                           " may be read or changed by other users (trials run on this host too); make it "
                           "private: chmod 600 " +
                           path);
  }
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    return InvalidArgument(what + " " + path + " belongs to another user; it must be this agent's own");
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxFileBytes) break;
  }
  ::close(fd);
  if (text.size() > kMaxFileBytes) return InvalidArgument(what + " " + path + " is too large");
  return text;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

}  // namespace

std::string CredentialPath(const std::string& dir) {
  return dir + "/credential";
}

Status PrepareStateDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      return InvalidArgument("state_dir " + dir + " cannot be created: " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return InvalidArgument("state_dir " + dir + " is not a folder");
  if (st.st_uid != ::geteuid())
    return InvalidArgument("state_dir " + dir + " belongs to another user; it must be this agent's own");
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    return InvalidArgument("state_dir " + dir +
                           " may be entered by other users; make it private: chmod 700 " + dir);
  return Status::Ok();
}

Result<std::optional<std::string>> LoadCredential(const std::string& dir, const std::string& agent_id) {
  const std::string path = CredentialPath(dir);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return InvalidArgument("the credential file " + path + " cannot be read: " + std::strerror(errno));
  }
  auto text = ReadPrivateFile(path, "the credential file");
  if (!text.ok()) return text.status();
  auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json["agent_id"].is_string() ||
      !json["credential"].is_string() || json["credential"].get<std::string>().empty())
    return InvalidArgument("the credential file " + path +
                           " is damaged; delete it and have an admin run `ring agent remove " + agent_id +
                           "` so the agent enrols again");
  if (json["agent_id"].get<std::string>() != agent_id) return std::optional<std::string>();
  return std::optional<std::string>(json["credential"].get<std::string>());
}

Status SaveCredential(const std::string& dir, const std::string& agent_id, const std::string& credential) {
  const std::string path = CredentialPath(dir);
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Internal("cannot create " + tmp + ": " + std::strerror(errno));
  const std::string text = nlohmann::json{{"agent_id", agent_id}, {"credential", credential}}.dump() + "\n";
  const bool written =
      ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Internal("cannot write the credential file " + path);
  }
  const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d >= 0) {
    ::fsync(d);
    ::close(d);
  }
  return Status::Ok();
}

Result<std::string> ReadTokenFile(const std::string& path) {
  auto text = ReadPrivateFile(path, "--token-file");
  if (!text.ok()) return text.status();
  std::string token = Trimmed(*text);
  if (token.empty()) return InvalidArgument("--token-file " + path + " is empty");
  return token;
}

}  // namespace ring
