#include "master/files/nofollow.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace ring {
namespace {

std::vector<std::string> Components(const std::string& rel) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= rel.size()) {
    const size_t end = rel.find('/', start);
    out.push_back(rel.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::string Errno(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// Why opening `name` failed, in words a user can act on.
Status OpenError(const std::string& name) {
  if (errno == ELOOP || errno == ENOTDIR)
    return InvalidArgument(name + " is a symbolic link or not a folder; links are never followed");
  if (errno == ENOENT) return NotFound(name + " does not exist");
  return Unavailable(Errno("cannot open " + name));
}

}  // namespace

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

bool IsPlainRelativePath(const std::string& rel) {
  if (rel.empty() || rel.front() == '/') return false;
  for (const auto& part : Components(rel))
    if (part.empty() || part == "." || part == "..") return false;
  return true;
}

Result<UniqueFd> OpenDirAt(int dir_fd, const std::string& rel) {
  UniqueFd current(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  if (!current.valid()) return Unavailable(Errno("cannot duplicate a folder descriptor"));
  if (rel.empty()) return current;
  if (!IsPlainRelativePath(rel)) return InvalidArgument("\"" + rel + "\" is not a plain relative path");
  std::string walked;
  for (const auto& part : Components(rel)) {
    walked += walked.empty() ? part : "/" + part;
    UniqueFd next(::openat(current.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return OpenError(walked);
    current = std::move(next);
  }
  return current;
}

Result<UniqueFd> OpenDirBelow(const std::string& root, const std::string& rel) {
  if (root.empty() || root.front() != '/') return InvalidArgument("\"" + root + "\" is not an absolute path");
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) return OpenError(root);
  return OpenDirAt(root_fd.get(), rel);
}

Result<UniqueFd> OpenRegularFileAt(int dir_fd, const std::string& rel, struct stat* st) {
  if (!IsPlainRelativePath(rel)) return InvalidArgument("\"" + rel + "\" is not a plain relative path");
  const size_t slash = rel.rfind('/');
  UniqueFd parent;
  if (slash != std::string::npos) {
    auto dir = OpenDirAt(dir_fd, rel.substr(0, slash));
    if (!dir.ok()) return dir.status();
    parent = std::move(dir).value();
  }
  const int at = parent.valid() ? parent.get() : dir_fd;
  const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  UniqueFd fd(::openat(at, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) {
    if (errno == ELOOP) return InvalidArgument(rel + " is a symbolic link; links are never followed");
    return OpenError(rel);
  }
  if (::fstat(fd.get(), st) != 0) return Unavailable(Errno("cannot stat " + rel));
  if (!S_ISREG(st->st_mode)) return InvalidArgument(rel + " is not a regular file");
  if (st->st_nlink != 1)
    return InvalidArgument(rel + " has " + std::to_string(st->st_nlink) +
                           " hard links; a checkpoint file must have exactly one");
  return fd;
}

Status RemoveTreeAt(int dir_fd, const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return InvalidArgument("\"" + name + "\" is not a folder entry");
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Unavailable(Errno("cannot stat " + name));
  }
  if (!S_ISDIR(st.st_mode)) {  // files and links: the entry itself goes
    if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT)
      return Unavailable(Errno("cannot remove " + name));
    return Status::Ok();
  }
  int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR) {  // replaced by a link since: remove the link only
      if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT)
        return Unavailable(Errno("cannot remove " + name));
      return Status::Ok();
    }
    return Unavailable(Errno("cannot open " + name));
  }
  DIR* dir = ::fdopendir(fd);  // owns fd from here
  if (dir == nullptr) {
    ::close(fd);
    return Unavailable(Errno("cannot list " + name));
  }
  std::vector<std::string> entries;
  while (struct dirent* e = ::readdir(dir)) {
    const std::string entry = e->d_name;
    if (entry != "." && entry != "..") entries.push_back(entry);
  }
  Status status = Status::Ok();
  for (const auto& entry : entries) {
    Status s = RemoveTreeAt(::dirfd(dir), entry);
    if (!s.ok() && status.ok()) status = Status(s.code(), name + "/" + s.message());
  }
  ::closedir(dir);
  if (!status.ok()) return status;
  if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return Unavailable(Errno("cannot remove " + name));
  return Status::Ok();
}

}  // namespace ring
