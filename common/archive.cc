#include "common/archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "common/archive_extractor.h"
#include "common/ringignore.h"

namespace ring {
namespace fs = std::filesystem;
namespace {

struct PackEntry {
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
using EntryPtr = std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)>;

// Lists what PackDirectory ships, sorted by path: directories and regular
// files (a link to a file ships the file's content; links to folders, sockets
// and devices are left out), minus what .ringignore excludes.
Result<std::vector<PackEntry>> ListFolder(const fs::path& root, const std::string& dir, uint64_t& total) {
  const IgnoreRules rules = IgnoreRules::Load(root / ".ringignore");
  std::vector<PackEntry> entries;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const auto& de = *it;
    const std::string rel = de.path().lexically_relative(root).generic_string();
    std::error_code type_ec;
    const bool is_dir = de.is_directory(type_ec) && !de.is_symlink(type_ec);
    if (rules.Ignored(rel, is_dir)) {
      if (is_dir) it.disable_recursion_pending();
      continue;
    }
    if (!is_dir && !de.is_regular_file(type_ec)) continue;
    PackEntry e{rel, is_dir, 0, false};
    if (!is_dir) {
      e.size = de.file_size(type_ec);
      if (type_ec) return InvalidArgument("cannot read " + (root / rel).string() + ": " + type_ec.message());
      const auto perms = fs::status(de.path(), type_ec).permissions();
      e.executable = (perms & fs::perms::owner_exec) != fs::perms::none;
    }
    total += e.size;
    entries.push_back(std::move(e));
  }
  if (ec) return InvalidArgument("cannot read " + dir + ": " + ec.message());
  std::sort(entries.begin(), entries.end(),
            [](const PackEntry& a, const PackEntry& b) { return a.rel < b.rel; });
  return entries;
}

std::string HumanSize(uint64_t bytes) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

}  // namespace

Result<std::string> PackDirectory(const std::string& dir, const PackOptions& options) {
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return InvalidArgument(dir + " is not a folder");
  uint64_t total = 0;
  auto listed = ListFolder(root, dir, total);
  if (!listed.ok()) return listed.status();
  if (total > options.max_bytes)
    return Status(ErrorCode::kTooLarge, "model directory " + dir + " is " + HumanSize(total) + ", over the " +
                                            HumanSize(options.max_bytes) +
                                            " limit; add large files to .ringignore");

  // Same files, same bytes: no timestamps in the gzip header or the entries,
  // owners left at 0, entries in path order.
  std::string out;
  ArchivePtr a(archive_write_new(), archive_write_free);
  archive_write_add_filter_gzip(a.get());
  archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr);
  archive_write_set_format_pax_restricted(a.get());
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open(a.get(), &out, nullptr, AppendToString, nullptr) != ARCHIVE_OK)
    return Internal(std::string("cannot start the archive: ") + archive_error_string(a.get()));
  uint64_t done = 0;
  std::vector<char> buffer(1 << 16);
  for (const auto& e : *listed) {
    std::ifstream in;
    if (!e.is_dir) {
      in.open(root / e.rel, std::ios::binary);
      if (!in) return InvalidArgument("cannot read " + (root / e.rel).string());
    }
    EntryPtr entry(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(entry.get(), e.rel.c_str());
    archive_entry_set_filetype(entry.get(), e.is_dir ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(entry.get(), e.is_dir || e.executable ? 0755 : 0644);
    archive_entry_set_size(entry.get(), static_cast<la_int64_t>(e.size));
    archive_entry_set_mtime(entry.get(), 0, 0);
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK)
      return Internal("cannot add " + e.rel + ": " + archive_error_string(a.get()));
    if (e.is_dir) continue;
    uint64_t left = e.size;
    while (left > 0 && in) {
      in.read(buffer.data(), static_cast<std::streamsize>(std::min<uint64_t>(left, buffer.size())));
      const auto n = in.gcount();
      if (n <= 0) break;
      if (archive_write_data(a.get(), buffer.data(), static_cast<size_t>(n)) != n)
        return Internal("cannot add " + e.rel + ": " + archive_error_string(a.get()));
      left -= static_cast<uint64_t>(n);
      done += static_cast<uint64_t>(n);
      if (options.progress) options.progress(done, total);
    }
    if (left != 0) return InvalidArgument(e.rel + " shrank while it was being packed");
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK)
    return Internal(std::string("cannot finish the archive: ") + archive_error_string(a.get()));
  if (options.progress) options.progress(total, total);
  return out;
}

Status UnpackArchive(const std::string& tar_gz, const std::string& dest, const UnpackLimits& limits) {
  // Check the whole archive first so that a refused one writes nothing.
  if (Status s = ArchiveExtractor(limits, nullptr).Run(tar_gz); !s.ok()) return s;
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) return Internal("cannot create " + dest + ": " + ec.message());
  const fs::path root(dest);
  return ArchiveExtractor(limits, &root).Run(tar_gz);
}

Status ValidateArchive(const std::string& tar_gz, const UnpackLimits& limits) {
  return ArchiveExtractor(limits, nullptr).Run(tar_gz);
}

}  // namespace ring
