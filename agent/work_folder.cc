#include "agent/work_folder.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace ring {
namespace {

// A tree deeper than this is left for an operator (each level holds a descriptor).
constexpr int kMaxDepth = 256;

std::string Mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string Error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Removes `name` in the folder `parent_fd`, recursively, by descriptor.
Status RemoveAt(int parent_fd, const char* name, const std::string& path, int depth) {
  if (::unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT) return Status::Ok();
  if (errno != EISDIR && errno != EPERM) return Internal(Error("cannot remove", path));
  if (depth >= kMaxDepth) return Internal(path + " is nested too deeply to remove");
  int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Internal(Error("cannot open", path));
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return Internal(Error("cannot list", path));
  }
  Status status = Status::Ok();
  while (dirent* entry = ::readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    Status s = RemoveAt(::dirfd(dir), entry->d_name, path + "/" + entry->d_name, depth + 1);
    if (!s.ok() && status.ok()) status = s;
  }
  ::closedir(dir);
  if (::unlinkat(parent_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT && status.ok())
    status = Internal(Error("cannot remove", path));
  return status;
}

// Gives everything in the open folder `fd` to uid:gid, by descriptor.
Status ChownIn(int fd, const std::string& path, uint32_t uid, uint32_t gid, int depth) {
  if (depth >= kMaxDepth) return Internal(path + " is nested too deeply");
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return Internal(Error("cannot list", path));
  }
  Status status = Status::Ok();
  while (dirent* entry = ::readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    const std::string child = path + "/" + entry->d_name;
    if (::fchownat(::dirfd(dir), entry->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) != 0) {
      status = Internal(Error("cannot give away", child));
      break;
    }
    struct stat st {};
    if (::fstatat(::dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
      continue;
    int sub = ::openat(::dirfd(dir), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) {
      status = Internal(Error("cannot open", child));
      break;
    }
    status = ChownIn(sub, child, uid, gid, depth + 1);
    if (!status.ok()) break;
  }
  ::closedir(dir);
  return status;
}

}  // namespace

Status PrepareWorkRoot(const std::string& root, bool others_enter) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool existed = fs::exists(fs::symlink_status(root, ec));
  if (!existed) {
    fs::create_directories(fs::path(root).parent_path(), ec);
    if (ec) return InvalidArgument("--work-dir " + root + ": cannot make its parent: " + ec.message());
    if (::mkdir(root.c_str(), 0711) != 0 && errno != EEXIST)
      return InvalidArgument("--work-dir " + Error("cannot make", root));
    ::chmod(root.c_str(), 0711);  // whatever the umask
  }
  struct stat st {};
  if (::lstat(root.c_str(), &st) != 0) return InvalidArgument("--work-dir " + Error("cannot read", root));
  if (!S_ISDIR(st.st_mode)) return InvalidArgument("--work-dir " + root + " is not a folder");
  if (st.st_uid != ::geteuid())
    return InvalidArgument(
        "--work-dir " + root + " belongs to uid " + std::to_string(st.st_uid) + ", not to the agent (uid " +
        std::to_string(::geteuid()) +
        "): whoever owns it could change the tasks' files; choose a folder of the agent's own");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return InvalidArgument("--work-dir " + root + " is writable by its group or by others (mode " +
                           Mode(st.st_mode) + "): run chmod go-w " + root + ", or choose another folder");
  if (!others_enter) return Status::Ok();
  if ((st.st_mode & S_IXOTH) == 0 && ::chmod(root.c_str(), (st.st_mode & 07777) | S_IXOTH) != 0)
    return InvalidArgument("--work-dir " + Error("cannot let tasks enter", root));
  for (fs::path up = fs::path(root).parent_path(); !up.empty(); up = up.parent_path()) {
    if (::stat(up.c_str(), &st) != 0)
      return InvalidArgument("--work-dir " + Error("cannot read", up.string()));
    if ((st.st_mode & S_IXOTH) == 0)
      return InvalidArgument(
          "--work-dir " + root + ": tasks run as their owners' accounts cannot reach it, " + up.string() +
          " has mode " + Mode(st.st_mode) + " (give it o+x, or choose another --work-dir)");
    if (up == up.root_path()) break;
  }
  return Status::Ok();
}

Status MakeWorkDir(const std::string& dir) {
  if (Status s = RemoveTree(dir); !s.ok()) return s;
  if (::mkdir(dir.c_str(), 0700) != 0) return Internal(Error("cannot make the work folder", dir));
  if (::chmod(dir.c_str(), 0700) != 0) return Internal(Error("cannot set the mode of", dir));
  return Status::Ok();
}

Status ChownTree(const std::string& dir, uint32_t uid, uint32_t gid) {
  // The tree was just made by the agent in a folder only it can enter; it is
  // walked by descriptor anyway, links changed themselves and never followed.
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Internal(Error("cannot open the work folder", dir));
  if (::fchown(fd, uid, gid) != 0) {
    ::close(fd);
    return Internal(Error("cannot give the work folder to its account:", dir));
  }
  return ChownIn(fd, dir, uid, gid, 0);
}

Status RemoveTree(const std::string& dir) {
  return RemoveAt(AT_FDCWD, dir.c_str(), dir, 0);
}

}  // namespace ring
