#include "common/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

namespace ring {
namespace fs = std::filesystem;
namespace {

struct IgnoreRule {
  std::string pattern;
  bool dir_only = false;
  bool anchored = false;  // contains a '/' (or starts with one): matched against the whole path
};

std::vector<IgnoreRule> ReadIgnoreFile(const fs::path& file) {
  std::vector<IgnoreRule> rules;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    IgnoreRule r;
    if (line.back() == '/') {
      r.dir_only = true;
      line.pop_back();
    }
    if (!line.empty() && line[0] == '/') {
      r.anchored = true;
      line.erase(0, 1);
    }
    if (line.find('/') != std::string::npos) r.anchored = true;
    if (line.empty()) continue;
    r.pattern = line;
    rules.push_back(std::move(r));
  }
  return rules;
}

bool Ignored(const std::vector<IgnoreRule>& rules, const std::string& rel, bool is_dir) {
  const std::string base = fs::path(rel).filename().string();
  for (const auto& r : rules) {
    if (r.dir_only && !is_dir) continue;
    const std::string& subject = r.anchored ? rel : base;
    if (fnmatch(r.pattern.c_str(), subject.c_str(), r.anchored ? FNM_PATHNAME : 0) == 0) return true;
  }
  return false;
}

std::string HumanSize(uint64_t bytes) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

struct Entry {
  std::string rel;
  bool is_dir = false;
  uint64_t size = 0;
  bool executable = false;
};

la_ssize_t AppendToString(struct archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;

// Rejects names that could land outside the destination.
bool SafeRelativePath(const std::string& name) {
  if (name.empty() || name[0] == '/') return false;
  for (const auto& part : fs::path(name)) {
    if (part == "..") return false;
  }
  return true;
}

Status ReadArchive(const std::string& tar_gz, const std::string* dest, const UnpackLimits& limits) {
  ArchivePtr a(archive_read_new(), archive_read_free);
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), tar_gz.data(), tar_gz.size()) != ARCHIVE_OK)
    return InvalidArgument(std::string("cannot read the archive: ") + archive_error_string(a.get()));
  uint64_t files = 0;
  uint64_t total = 0;
  struct archive_entry* entry = nullptr;
  for (;;) {
    int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
      return InvalidArgument(std::string("the archive is corrupt: ") + archive_error_string(a.get()));
    std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    if (name.empty()) continue;
    if (!SafeRelativePath(name)) return InvalidArgument("archive entry \"" + name + "\" points outside the folder");
    if (archive_entry_hardlink(entry)) return InvalidArgument("archive entry \"" + name + "\" is a hard link");
    if (++files > limits.max_files)
      return {ErrorCode::kTooLarge, "the archive holds over " + std::to_string(limits.max_files) + " files"};
    const auto type = archive_entry_filetype(entry);
    const fs::path target = dest ? fs::path(*dest) / name : fs::path();
    if (type == AE_IFDIR) {
      if (dest) fs::create_directories(target);
      continue;
    }
    if (type == AE_IFLNK) {
      const std::string link = archive_entry_symlink(entry) ? archive_entry_symlink(entry) : "";
      const std::string resolved = (fs::path(name).parent_path() / link).lexically_normal().string();
      if (link.empty() || link[0] == '/' || !SafeRelativePath(resolved) || resolved.rfind("..", 0) == 0)
        return InvalidArgument("archive entry \"" + name + "\" is a link that leaves the folder");
      if (dest) {
        fs::create_directories(target.parent_path());
        std::error_code ec;
        fs::create_symlink(link, target, ec);
        if (ec) return Internal("cannot create link " + target.string() + ": " + ec.message());
      }
      continue;
    }
    if (type != AE_IFREG) return InvalidArgument("archive entry \"" + name + "\" is not a file, folder or link");
    int fd = -1;
    if (dest) {
      fs::create_directories(target.parent_path());
      const mode_t mode = (archive_entry_perm(entry) & 0111) ? 0755 : 0644;
      fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
      if (fd < 0) return Internal("cannot write " + target.string());
    }
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    Status status;
    for (;;) {
      r = archive_read_data_block(a.get(), &block, &size, &offset);
      if (r == ARCHIVE_EOF) break;
      if (r != ARCHIVE_OK) {
        status = InvalidArgument(std::string("the archive is corrupt: ") + archive_error_string(a.get()));
        break;
      }
      total += size;
      if (total > limits.max_total_bytes) {
        status = {ErrorCode::kTooLarge, "the archive unpacks to over " + HumanSize(limits.max_total_bytes)};
        break;
      }
      if (fd >= 0 && ::pwrite(fd, block, size, offset) != static_cast<ssize_t>(size)) {
        status = Internal("cannot write " + target.string());
        break;
      }
    }
    if (fd >= 0) ::close(fd);
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> PackDirectory(const std::string& dir, const PackOptions& options) {
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return InvalidArgument(dir + " is not a folder");
  const auto rules = ReadIgnoreFile(root / ".ringignore");
  std::vector<Entry> entries;
  uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return InvalidArgument("cannot read " + dir + ": " + ec.message());
    const auto& de = *it;
    const std::string rel = fs::relative(de.path(), root).generic_string();
    const bool is_dir = de.is_directory() && !de.is_symlink();
    if (Ignored(rules, rel, is_dir)) {
      if (is_dir) it.disable_recursion_pending();
      continue;
    }
    if (!is_dir && !de.is_regular_file()) continue;  // sockets, devices, links are not shipped
    Entry e{rel, is_dir, is_dir ? 0 : de.file_size(), false};
    if (!is_dir) e.executable = (fs::status(de.path()).permissions() & fs::perms::owner_exec) != fs::perms::none;
    total += e.size;
    entries.push_back(std::move(e));
  }
  if (total > options.max_bytes)
    return Status(ErrorCode::kTooLarge, "model directory " + dir + " is " + HumanSize(total) + ", over the " +
                                            HumanSize(options.max_bytes) + " limit; add large files to .ringignore");
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.rel < b.rel; });

  std::string out;
  ArchivePtr a(archive_write_new(), archive_write_free);
  archive_write_add_filter_gzip(a.get());
  archive_write_set_format_pax_restricted(a.get());
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open(a.get(), &out, nullptr, AppendToString, nullptr) != ARCHIVE_OK)
    return Internal(std::string("cannot start the archive: ") + archive_error_string(a.get()));
  uint64_t done = 0;
  std::vector<char> buffer(1 << 16);
  for (const auto& e : entries) {
    std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)> entry(archive_entry_new(),
                                                                                 archive_entry_free);
    archive_entry_set_pathname(entry.get(), e.rel.c_str());
    archive_entry_set_filetype(entry.get(), e.is_dir ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(entry.get(), e.is_dir || e.executable ? 0755 : 0644);
    archive_entry_set_size(entry.get(), static_cast<la_int64_t>(e.size));
    archive_entry_set_mtime(entry.get(), 0, 0);
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK)
      return Internal(std::string("cannot add ") + e.rel + ": " + archive_error_string(a.get()));
    if (e.is_dir) continue;
    std::ifstream in(root / e.rel, std::ios::binary);
    uint64_t left = e.size;
    while (left > 0 && in) {
      in.read(buffer.data(), static_cast<std::streamsize>(std::min<uint64_t>(left, buffer.size())));
      const auto n = in.gcount();
      if (n <= 0) break;
      if (archive_write_data(a.get(), buffer.data(), static_cast<size_t>(n)) != n)
        return Internal(std::string("cannot add ") + e.rel + ": " + archive_error_string(a.get()));
      left -= static_cast<uint64_t>(n);
      done += static_cast<uint64_t>(n);
      if (options.progress) options.progress(done, total);
    }
    if (left != 0) return InvalidArgument(e.rel + " changed while it was being packed");
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK)
    return Internal(std::string("cannot finish the archive: ") + archive_error_string(a.get()));
  if (options.progress) options.progress(total, total);
  return out;
}

Status UnpackArchive(const std::string& tar_gz, const std::string& dest, const UnpackLimits& limits) {
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) return Internal("cannot create " + dest + ": " + ec.message());
  if (Status s = ReadArchive(tar_gz, nullptr, limits); !s.ok()) return s;  // check everything before writing
  return ReadArchive(tar_gz, &dest, limits);
}

Status ValidateArchive(const std::string& tar_gz, const UnpackLimits& limits) {
  return ReadArchive(tar_gz, nullptr, limits);
}

std::string Base64Encode(std::string_view data) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(data[i]) << 16) | (static_cast<uint8_t>(data[i + 1]) << 8) |
                       static_cast<uint8_t>(data[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < data.size()) {
    uint32_t v = static_cast<uint8_t>(data[i]) << 16;
    if (i + 1 < data.size()) v |= static_cast<uint8_t>(data[i + 1]) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < data.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return InvalidArgument("base64 text has a length that is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (v[k] = value(c)) < 0)
        return InvalidArgument("base64 text has an invalid character at offset " + std::to_string(i + k));
    }
    const uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>((n >> 8) & 255);
    if (pad < 1) out += static_cast<char>(n & 255);
  }
  return out;
}

}  // namespace ring
