#pragma once
// Files below a trusted folder, reached without following any symbolic link:
// each path component is opened with openat(O_NOFOLLOW) from the folder
// above it, so a link anywhere below the root (a checkpoint folder replaced
// by a link to the master's data folder, a file linked to a secret) is
// refused instead of followed. Used for everything the master reads or
// deletes in checkpoint storage. Blocking file system calls: never on an io
// thread for a whole tree (RemoveTreeAt), a few calls are fine.
#include <sys/stat.h>

#include <string>
#include <utility>

#include "common/status.h"

namespace ring {

// An open file descriptor, closed when it goes away.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// A relative path of plain names: not empty, not absolute, no "." or ".."
// and no empty components.
bool IsPlainRelativePath(const std::string& rel);

// Opens the folder `root` (absolute; a link in the root's own path is
// followed: it is the administrator's), then each component of `rel` (may
// be empty) below it with O_NOFOLLOW | O_DIRECTORY.
Result<UniqueFd> OpenDirBelow(const std::string& root, const std::string& rel);
// The same from an open folder.
Result<UniqueFd> OpenDirAt(int dir_fd, const std::string& rel);
// Opens the regular file `rel` below `dir_fd` for reading, no link at any
// level; refuses anything else, and a file with other hard links (st_nlink
// over 1: a link to a file elsewhere). Fills `st`.
Result<UniqueFd> OpenRegularFileAt(int dir_fd, const std::string& rel, struct stat* st);
// Removes `name` (an entry of `dir_fd`) and, when it is a real folder,
// everything below it. Links are removed, never followed. Missing is fine.
Status RemoveTreeAt(int dir_fd, const std::string& name);

}  // namespace ring
