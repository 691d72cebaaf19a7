#include "master/auth/cluster_token.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "master/auth/tokens.h"

namespace ring {
namespace {

std::string Trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

// Writes `token` to a new file that only this user can read, then moves it
// into place, so a crash never leaves a half-written token.
Status CreateTokenFile(const std::string& path, const std::string& token) {
  const std::string tmp = path + ".tmp";
  std::error_code ignored;
  std::filesystem::remove(tmp, ignored);  // a leftover of a crash may have other modes
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("cannot create the cluster token file " + tmp + ": " + std::strerror(errno));
  const std::string text = token + "\n";
  const bool written =
      ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  std::error_code ec;
  if (written) std::filesystem::rename(tmp, path, ec);
  if (written && !ec) {
    // The rename is durable once the folder is synced.
    const std::string folder = std::filesystem::path(path).parent_path().string();
    const int dir = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }
  if (!written || ec) {
    std::filesystem::remove(tmp, ec);
    return Internal("cannot write the cluster token file " + path);
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> LoadOrCreateClusterToken(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return Internal("cannot read the cluster token file " + path + ": " + std::strerror(errno));
    const std::string token = NewToken();
    if (Status s = CreateTokenFile(path, token); !s.ok()) return s;
    return token;
  }
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    return InvalidArgument("the cluster token file " + path +
                           " may be read or changed by other users; make it private (chmod 600 " + path +
                           ")");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Internal("cannot read the cluster token file " + path);
  std::string token = Trimmed(text.str());
  if (token.size() < 16)
    return InvalidArgument("the cluster token in " + path + " is " +
                           (token.empty() ? std::string("empty") : "shorter than 16 characters") +
                           "; delete the file to have a new one made");
  return token;
}

Result<std::string> RotateClusterToken(const std::string& path) {
  const std::string token = NewToken();
  if (Status s = CreateTokenFile(path, token); !s.ok()) return s;
  return token;
}

}  // namespace ring
