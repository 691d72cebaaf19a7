#include "master/files/checkpoint_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "master/files/checkpoint_folder.h"

namespace ring {
namespace {

constexpr const char* kManifestName = ".ring-checkpoint.json";
constexpr size_t kPiece = 64 * 1024;

struct Entry {
  std::string path;
  enum class Kind { kDir, kFile, kManifest } kind = Kind::kFile;
  const CheckpointFile* file = nullptr;
};

la_ssize_t Collect(struct archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

class CheckpointArchiveStream final : public BodyStream {
 public:
  CheckpointArchiveStream(CheckpointRecord c, UniqueFd folder, std::shared_ptr<void> slot)
      : record_(std::move(c)), folder_(std::move(folder)), slot_(std::move(slot)) {
    manifest_ = CheckpointManifestText(record_);
    std::set<std::string> dirs;
    for (const auto& f : record_.resources)
      for (size_t slash = f.path.find('/'); slash != std::string::npos; slash = f.path.find('/', slash + 1))
        dirs.insert(f.path.substr(0, slash));
    for (const auto& d : dirs) entries_.push_back({d, Entry::Kind::kDir, nullptr});
    for (const auto& f : record_.resources) entries_.push_back({f.path, Entry::Kind::kFile, &f});
    entries_.push_back({kManifestName, Entry::Kind::kManifest, nullptr});
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.path < b.path; });
  }

  ~CheckpointArchiveStream() override {
    if (archive_ != nullptr) archive_write_free(archive_);
  }

  Result<size_t> Read(char* out, size_t size) override {
    if (!error_.ok()) return error_;
    while (out_.size() - out_offset_ < size && !finished_) {
      if (Status s = Advance(); !s.ok()) {
        error_ = Status(s.code(), "checkpoint " + record_.uuid + ": " + s.message());
        return error_;
      }
    }
    const size_t n = std::min(size, out_.size() - out_offset_);
    std::memcpy(out, out_.data() + out_offset_, n);
    out_offset_ += n;
    if (out_offset_ == out_.size()) {
      out_.clear();
      out_offset_ = 0;
    }
    return n;
  }

 private:
  Status Fail(const std::string& what) {
    return Internal(what + ": " + (archive_ ? archive_error_string(archive_) : "no archive"));
  }

  // One step: start the archive, start an entry, add a piece of a file, or finish.
  Status Advance() {
    if (archive_ == nullptr) {
      archive_ = archive_write_new();
      archive_write_add_filter_gzip(archive_);
      archive_write_set_filter_option(archive_, "gzip", "timestamp", nullptr);
      archive_write_set_format_pax_restricted(archive_);
      archive_write_set_bytes_in_last_block(archive_, 1);
      if (archive_write_open(archive_, &out_, nullptr, Collect, nullptr) != ARCHIVE_OK)
        return Fail("cannot start the archive");
      return Status::Ok();
    }
    if (file_.valid()) return AddPiece();
    if (next_ == entries_.size()) {
      if (archive_write_close(archive_) != ARCHIVE_OK) return Fail("cannot finish the archive");
      finished_ = true;
      return Status::Ok();
    }
    const Entry& e = entries_[next_++];
    uint64_t size = 0;
    if (e.kind == Entry::Kind::kFile) {
      struct stat st {};
      auto fd = OpenRegularFileAt(folder_.get(), e.path, &st);
      if (!fd.ok()) return fd.status();
      if (st.st_size != e.file->size)
        return InvalidArgument(e.path + " has " + std::to_string(st.st_size) + " bytes, registered with " +
                               std::to_string(e.file->size));
      file_ = std::move(fd).value();
      left_ = static_cast<uint64_t>(st.st_size);
      size = left_;
      sha_ = std::make_unique<Sha256>();
      current_ = &e;
    } else if (e.kind == Entry::Kind::kManifest) {
      size = manifest_.size();
    }
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    archive_entry_set_filetype(entry, e.kind == Entry::Kind::kDir ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(entry, e.kind == Entry::Kind::kDir ? 0755 : 0644);
    archive_entry_set_size(entry, static_cast<la_int64_t>(size));
    archive_entry_set_mtime(entry, 0, 0);
    const int rc = archive_write_header(archive_, entry);
    archive_entry_free(entry);
    if (rc != ARCHIVE_OK) return Fail("cannot add " + e.path);
    if (e.kind == Entry::Kind::kManifest &&
        archive_write_data(archive_, manifest_.data(), manifest_.size()) != static_cast<la_ssize_t>(size))
      return Fail("cannot add " + e.path);
    if (file_.valid() && left_ == 0) return FinishFile();
    return Status::Ok();
  }

  Status AddPiece() {
    char buffer[kPiece];
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left_, sizeof buffer));
    ssize_t n = ::read(file_.get(), buffer, want);
    while (n < 0 && errno == EINTR) n = ::read(file_.get(), buffer, want);
    if (n < 0) return Unavailable("cannot read " + current_->path + ": " + std::strerror(errno));
    if (n == 0) return InvalidArgument(current_->path + " shrank while it was being sent");
    sha_->Update(buffer, static_cast<size_t>(n));
    if (archive_write_data(archive_, buffer, static_cast<size_t>(n)) != n)
      return Fail("cannot add " + current_->path);
    left_ -= static_cast<uint64_t>(n);
    if (left_ == 0) return FinishFile();
    return Status::Ok();
  }

  Status FinishFile() {
    file_ = UniqueFd();
    if (sha_->HexDigest() != current_->file->sha256)
      return InvalidArgument(current_->path +
                             " does not have its registered SHA-256 (changed since it was registered)");
    return Status::Ok();
  }

  CheckpointRecord record_;
  UniqueFd folder_;
  std::shared_ptr<void> slot_;
  std::string manifest_;
  std::vector<Entry> entries_;
  size_t next_ = 0;
  struct archive* archive_ = nullptr;
  std::string out_;  // compressed bytes not yet handed out; about one piece
  size_t out_offset_ = 0;
  bool finished_ = false;
  Status error_ = Status::Ok();
  UniqueFd file_;  // the file being added
  const Entry* current_ = nullptr;
  uint64_t left_ = 0;
  std::unique_ptr<Sha256> sha_;
};

}  // namespace

std::string CheckpointManifestText(const CheckpointRecord& c) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : c.resources)
    files.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  auto metadata = nlohmann::json::parse(c.metadata_json, nullptr, false);
  if (metadata.is_discarded()) metadata = nlohmann::json::object();
  const nlohmann::json manifest = {{"batches", c.batches}, {"metadata", metadata}, {"resources", files}};
  return manifest.dump(2) + "\n";
}

std::unique_ptr<BodyStream> MakeCheckpointArchiveStream(CheckpointRecord c, UniqueFd folder,
                                                        std::shared_ptr<void> slot) {
  return std::make_unique<CheckpointArchiveStream>(std::move(c), std::move(folder), std::move(slot));
}

}  // namespace ring
