#include "common/archive_extractor.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <sstream>
#include <system_error>
#include <vector>

namespace ring {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxPartBytes = 255;   // NAME_MAX
constexpr size_t kMaxPathBytes = 4000;  // under PATH_MAX with room for the destination
constexpr int kMaxLinkHops = 40;        // as the kernel's MAXSYMLINKS

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string ErrnoText() {
  return std::error_code(errno, std::generic_category()).message();
}

std::string ErrorText(struct archive* a) {
  const char* e = archive_error_string(a);
  return e ? e : "unknown error";
}

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(path);
  while (std::getline(in, part, '/')) parts.push_back(part);
  return parts;
}

std::string Join(const std::vector<std::string>& parts, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? "/" : "") + parts[i];
  return out;
}

Status Refuse(const std::string& name, const std::string& what) {
  return InvalidArgument("archive entry \"" + name + "\" " + what);
}

Status TooLarge(const std::string& what) {
  return {ErrorCode::kTooLarge, "the archive " + what};
}

std::string Mib(uint64_t bytes) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

Status WriteAll(int fd, const char* data, size_t size, off_t offset, const fs::path& path) {
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, data, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Internal("cannot write " + path.string() + ": " + ErrnoText());
    data += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return Status::Ok();
}

}  // namespace

Status ArchiveExtractor::Run(const std::string& tar_gz) {
  ArchivePtr a(archive_read_new(), archive_read_free);
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), tar_gz.data(), tar_gz.size()) != ARCHIVE_OK)
    return InvalidArgument("cannot read the archive: " + ErrorText(a.get()));
  for (;;) {
    struct archive_entry* entry = nullptr;
    const int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
      return InvalidArgument("the archive is corrupt: " + ErrorText(a.get()));
    if (Status s = Next(a.get(), entry); !s.ok()) return s;
  }
  return CheckTree();
}

Status ArchiveExtractor::Normalize(const char* raw, const char* what, std::string& name) const {
  if (raw == nullptr) return InvalidArgument(std::string("the archive has ") + what + " without a name");
  const std::string path(raw);
  if (!path.empty() && path[0] == '/') return Refuse(path, "has an absolute path");
  std::vector<std::string> parts;
  for (auto& part : Split(path)) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return Refuse(path, "climbs out of the folder with \"..\"");
    if (part.size() > kMaxPartBytes) return Refuse(path, "has a name over 255 bytes");
    parts.push_back(std::move(part));
  }
  name = Join(parts, parts.size());
  if (name.size() > kMaxPathBytes) return Refuse(path.substr(0, 60) + "...", "has a path that is too long");
  return Status::Ok();
}

Status ArchiveExtractor::Register(const std::string& name, char kind) {
  const auto [it, inserted] = kinds_.emplace(name, kind);
  if (!inserted && !(it->second == 'd' && kind == 'd')) return Refuse(name, "appears twice in the archive");
  return Status::Ok();
}

Status ArchiveExtractor::Next(struct archive* a, struct archive_entry* entry) {
  std::string name;
  if (Status s = Normalize(archive_entry_pathname(entry), "an entry", name); !s.ok()) return s;
  if (name.empty()) return Status::Ok();  // the folder itself ("./")
  if (++files_ > limits_.max_files)
    return TooLarge("holds over " + std::to_string(limits_.max_files) + " files");
  std::error_code ec;

  if (const char* hard = archive_entry_hardlink(entry)) {
    std::string target;
    if (!Normalize(hard, "a hard link", target).ok())
      return Refuse(name, "is a hard link to \"" + std::string(hard) + "\", outside the folder");
    const auto kind = kinds_.find(target);
    if (kind == kinds_.end() || kind->second != 'f')
      return Refuse(name,
                    "is a hard link to \"" + target + "\", which is not a file before it in the archive");
    const uint64_t size = sizes_.at(target);
    if (size > limits_.max_total_bytes - bytes_)
      return TooLarge("unpacks to over " + Mib(limits_.max_total_bytes));
    bytes_ += size;
    if (Status s = Register(name, 'f'); !s.ok()) return s;
    sizes_[name] = size;
    if (!dest_) return Status::Ok();
    if (Status s = CheckOnDisk(name); !s.ok()) return s;
    return CopyFile(target, name);
  }

  switch (archive_entry_filetype(entry)) {
    case AE_IFDIR: {
      if (Status s = Register(name, 'd'); !s.ok()) return s;
      if (!dest_) return Status::Ok();
      if (Status s = CheckOnDisk(name); !s.ok()) return s;
      fs::create_directories(*dest_ / name, ec);
      if (ec) return Internal("cannot create " + (*dest_ / name).string() + ": " + ec.message());
      return Status::Ok();
    }
    case AE_IFLNK: {
      const char* raw = archive_entry_symlink(entry);
      const std::string target = raw ? raw : "";
      if (Status s = CheckLink(name, target); !s.ok()) return s;
      if (Status s = Register(name, 'l'); !s.ok()) return s;
      links_[name] = target;
      if (!dest_) return Status::Ok();
      if (Status s = CheckOnDisk(name); !s.ok()) return s;
      const fs::path path = *dest_ / name;
      fs::create_directories(path.parent_path(), ec);
      if (!ec) fs::create_symlink(target, path, ec);
      if (ec) return Internal("cannot create the link " + path.string() + ": " + ec.message());
      return Status::Ok();
    }
    case AE_IFREG:
      if (Status s = Register(name, 'f'); !s.ok()) return s;
      return ReadFile(a, entry, name);
    default:
      return Refuse(name, "is a device, pipe or socket");
  }
}

Status ArchiveExtractor::ReadFile(struct archive* a, struct archive_entry* entry, const std::string& name) {
  const uint64_t room = limits_.max_total_bytes - bytes_;
  const auto too_large = [&] { return TooLarge("unpacks to over " + Mib(limits_.max_total_bytes)); };
  uint64_t extent = 0;  // bytes the file takes, holes of sparse files included
  if (archive_entry_size_is_set(entry) && archive_entry_size(entry) > 0)
    extent = static_cast<uint64_t>(archive_entry_size(entry));
  if (extent > room) return too_large();  // refused from its header, before any data
  Fd out;
  const fs::path path = dest_ ? *dest_ / name : fs::path();
  if (dest_) {
    if (Status s = CheckOnDisk(name); !s.ok()) return s;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) return Internal("cannot create " + path.parent_path().string() + ": " + ec.message());
    out.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out.fd < 0) return Internal("cannot write " + path.string() + ": " + ErrnoText());
    const bool executable = (archive_entry_perm(entry) & 0111) != 0;
    if (::fchmod(out.fd, executable ? 0755 : 0644) != 0) return Internal("cannot chmod " + path.string());
  }
  for (;;) {
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    const int r = archive_read_data_block(a, &block, &size, &offset);
    if (r == ARCHIVE_EOF) break;
    if ((r != ARCHIVE_OK && r != ARCHIVE_WARN) || offset < 0)
      return InvalidArgument("the archive is corrupt at \"" + name + "\": " + ErrorText(a));
    const uint64_t end = static_cast<uint64_t>(offset) + size;
    if (end > room) return too_large();
    extent = std::max(extent, end);
    if (out.fd >= 0) {
      if (Status s = WriteAll(out.fd, static_cast<const char*>(block), size, offset, path); !s.ok()) return s;
    }
  }
  if (out.fd >= 0 && ::ftruncate(out.fd, static_cast<off_t>(extent)) != 0)  // a trailing hole
    return Internal("cannot write " + path.string() + ": " + ErrnoText());
  bytes_ += extent;
  sizes_[name] = extent;
  return Status::Ok();
}

Status ArchiveExtractor::CheckLink(const std::string& name, const std::string& target) const {
  if (target.empty()) return Refuse(name, "is a link without a target");
  if (target[0] == '/') return Refuse(name, "is a link to the absolute path \"" + target + "\"");
  std::vector<std::string> at = Split(name);
  at.pop_back();
  int hops = 0;
  if (!Resolve(at, target, hops))
    return Refuse(name, hops > kMaxLinkHops ? "is a link in a loop of links"
                                            : "is a link to \"" + target + "\", outside the folder");
  return Status::Ok();
}

// Walks `target` from the folder `at` the way the kernel will once every
// entry exists, following the links known so far. Resolving by name alone
// is not enough: "x/up -> .." plus "out -> x/up/.." reads as inside, is not.
bool ArchiveExtractor::Resolve(std::vector<std::string>& at, const std::string& target, int& hops) const {
  if (!target.empty() && target[0] == '/') return false;
  for (const auto& part : Split(target)) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (at.empty()) return false;
      at.pop_back();
      continue;
    }
    at.push_back(part);
    const auto link = links_.find(Join(at, at.size()));
    if (link == links_.end()) continue;
    if (++hops > kMaxLinkHops) return false;
    at.pop_back();
    if (!Resolve(at, link->second, hops)) return false;
  }
  return true;
}

Status ArchiveExtractor::CheckTree() const {
  for (const auto& [name, kind] : kinds_) {
    for (size_t slash = name.find('/'); slash != std::string::npos; slash = name.find('/', slash + 1)) {
      const auto parent = kinds_.find(name.substr(0, slash));
      if (parent == kinds_.end() || parent->second == 'd') continue;
      return Refuse(name, std::string("lies below the ") + (parent->second == 'l' ? "link" : "file") + " \"" +
                              parent->first + "\"");
    }
  }
  for (const auto& [name, target] : links_) {
    if (Status s = CheckLink(name, target); !s.ok()) return s;
  }
  return Status::Ok();
}

Status ArchiveExtractor::CheckOnDisk(const std::string& name) const {
  fs::path path = *dest_;
  for (const auto& part : Split(name)) {
    path /= part;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(path, ec)))
      return Refuse(name, "would be written through the link " + path.string() + " already in the folder");
  }
  return Status::Ok();
}

Status ArchiveExtractor::CopyFile(const std::string& from, const std::string& to) const {
  const fs::path src = *dest_ / from;
  const fs::path dst = *dest_ / to;
  std::error_code ec;
  fs::create_directories(dst.parent_path(), ec);
  if (ec) return Internal("cannot create " + dst.parent_path().string() + ": " + ec.message());
  Fd in;
  Fd out;
  struct stat st {};
  in.fd = ::open(src.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in.fd < 0 || ::fstat(in.fd, &st) != 0)
    return Internal("cannot read " + src.string() + ": " + ErrnoText());
  out.fd = ::open(dst.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out.fd < 0 || ::fchmod(out.fd, st.st_mode & 0755) != 0)
    return Internal("cannot write " + dst.string() + ": " + ErrnoText());
  std::vector<char> buffer(1 << 16);
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::read(in.fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Internal("cannot read " + src.string() + ": " + ErrnoText());
    if (n == 0) break;
    if (Status s = WriteAll(out.fd, buffer.data(), static_cast<size_t>(n), offset, dst); !s.ok()) return s;
    offset += n;
  }
  return Status::Ok();
}

}  // namespace ring
