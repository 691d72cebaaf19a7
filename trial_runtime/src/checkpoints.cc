#include "ring/trial/checkpoints.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "checkpoints_files.h"
#include "trial_api.h"
#include "validation_clock.h"

namespace ring::trial {
namespace fs = std::filesystem;
namespace {

// A random (version 4) uuid, all 122 bits from the system's entropy source.
std::string NewUuid() {
  std::random_device rd;
  uint64_t hi = (static_cast<uint64_t>(rd()) << 32) | rd();
  uint64_t lo = (static_cast<uint64_t>(rd()) << 32) | rd();
  hi = (hi & 0xffffffffffff0fffull) | 0x0000000000004000ull;  // version 4
  lo = (lo & 0x3fffffffffffffffull) | 0x8000000000000000ull;  // variant 1
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    const uint64_t word = i < 16 ? hi : lo;
    out += kHex[(word >> (60 - 4 * (i % 16))) & 15];
    if (i == 7 || i == 11 || i == 15 || i == 19) out += '-';
  }
  return out;
}

nlohmann::json FilesJson(const std::vector<CheckpointFile>& files) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : files) out.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  return out;
}

// A relative path that stays inside the checkpoint directory.
bool IsSafeRelativePath(const std::string& text) {
  if (text.empty()) return false;
  const fs::path p(text);
  if (p.is_absolute() || p.has_root_name()) return false;
  for (const auto& part : p)
    if (part == ".." || part == ".") return false;
  return true;
}

// Reads a registration (the master's record or the manifest) into `info`.
void ParseRecord(const nlohmann::json& record, const std::string& source, CheckpointInfo& info) {
  auto bad = [&](const std::string& why) {
    return CheckpointError("checkpoint " + info.uuid + ": " + source + " " + why);
  };
  if (!record.is_object()) throw bad("is not a JSON object");
  const auto batches = record.find("batches");
  if (batches == record.end() || !batches->is_number_integer() || batches->get<int64_t>() < 0)
    throw bad("has no valid \"batches\"");
  info.batches = batches->get<int64_t>();
  info.metadata = record.value("metadata", nlohmann::json::object());
  const auto resources = record.find("resources");
  if (resources == record.end() || !resources->is_array()) throw bad("has no \"resources\" list");
  info.files.clear();
  for (const auto& f : *resources) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("size") ||
        !f["size"].is_number_unsigned() || !f.contains("sha256") || !f["sha256"].is_string())
      throw bad("has a malformed resource entry " + f.dump());
    CheckpointFile file{f["path"].get<std::string>(), f["size"].get<uint64_t>(),
                        f["sha256"].get<std::string>()};
    if (!IsSafeRelativePath(file.path)) throw bad("names a file outside the checkpoint: " + file.path);
    info.files.push_back(std::move(file));
  }
}

// The manifest holds no uuid or time, so the same state gives the same bytes.
void WriteManifest(const fs::path& dir, int64_t batches, const nlohmann::json& metadata,
                   const std::vector<CheckpointFile>& files) {
  const nlohmann::json manifest = {
      {"batches", batches}, {"metadata", metadata}, {"resources", FilesJson(files)}};
  std::ofstream out(dir / kCheckpointManifest, std::ios::binary | std::ios::trunc);
  out << manifest.dump(2) << "\n";
  out.close();
  if (!out) throw CheckpointError("cannot write " + (dir / kCheckpointManifest).string());
}

}  // namespace

namespace detail {

// Asks the kernel to start writing every file of `dir` to disk now, without
// waiting: the disk works while the files are hashed, and the fsyncs of the
// commit then find little left to do. Best effort.
void StartWriteback(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (entry.symlink_status().type() != fs::file_type::regular) continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    ::close(fd);
  }
}

// Every regular file the writer left in `dir`, sorted, with size and
// SHA-256: hashed here, or, when the writer listed them (`listed` not
// empty), checked to be exactly those files with those sizes.
std::vector<CheckpointFile> ListFiles(const fs::path& dir, std::vector<CheckpointFile> listed) {
  std::vector<CheckpointFile> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(entry.path(), dir).generic_string();
    const auto type = entry.symlink_status().type();
    if (type == fs::file_type::directory) continue;
    if (type != fs::file_type::regular)
      throw CheckpointError("the checkpoint writer left " + rel +
                            ", which is not a regular file or folder (links are not stored)");
    if (rel == kCheckpointManifest)
      throw CheckpointError(std::string("the checkpoint writer must not write ") + kCheckpointManifest +
                            ": the runtime writes it");
    files.push_back(
        {rel, static_cast<uint64_t>(entry.file_size()), listed.empty() ? Sha256File(entry.path()) : ""});
  }
  auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
  std::sort(files.begin(), files.end(), by_path);
  if (listed.empty()) return files;
  std::sort(listed.begin(), listed.end(), by_path);
  if (listed.size() != files.size())
    throw CheckpointError("the checkpoint writer listed " + std::to_string(listed.size()) +
                          " files and left " + std::to_string(files.size()));
  for (size_t i = 0; i < files.size(); ++i) {
    if (listed[i].path != files[i].path || listed[i].size != files[i].size || listed[i].sha256.size() != 64)
      throw CheckpointError("the checkpoint writer listed " + listed[i].path + " (" +
                            std::to_string(listed[i].size) + " bytes) but left " + files[i].path + " (" +
                            std::to_string(files[i].size) + " bytes)");
    files[i].sha256 = listed[i].sha256;
  }
  return files;
}

void SyncTree(const fs::path& dir) {
  auto sync = [](const fs::path& p, bool directory) {
    const int fd =
        ::open(p.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) throw CheckpointError("cannot open " + p.string() + " to sync it");
    const int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0) throw CheckpointError("cannot sync " + p.string());
  };
  for (const auto& entry : fs::recursive_directory_iterator(dir)) sync(entry.path(), entry.is_directory());
  sync(dir, true);
}

}  // namespace detail

Checkpoints::Checkpoints(std::unique_ptr<CheckpointStorage> storage, std::shared_ptr<detail::TrialApi> api,
                         fs::path resume, int64_t min_period_batches)
    : storage_(std::move(storage)),
      api_(std::move(api)),
      resume_(std::move(resume)),
      min_period_(min_period_batches) {}

// A checkpoint still in flight is finished (its error, if any, cannot be
// thrown from here).
Checkpoints::~Checkpoints() {
  if (in_flight_.valid()) in_flight_.wait();
}

nlohmann::json Checkpoints::Metadata(int64_t batches, const nlohmann::json& metadata) const {
  if (batches < 0) throw CheckpointError("a checkpoint cannot be at negative batches");
  if (!metadata.is_object()) throw CheckpointError("checkpoint metadata must be a JSON object");
  nlohmann::json meta = metadata;
  if (validations_) validations_->AddTo(meta);
  return meta;
}

namespace {

// A plain writer as a hashing one that lists nothing: the runtime hashes.
Checkpoints::HashingWriter Unhashed(Checkpoints::Writer writer) {
  return [writer = std::move(writer)](const fs::path& dir) {
    writer(dir);
    return std::vector<CheckpointFile>{};
  };
}

}  // namespace

std::string Checkpoints::save(int64_t batches, const Writer& writer, const nlohmann::json& metadata) {
  wait();
  const std::string uuid = Write(batches, Unhashed(writer), Metadata(batches, metadata));
  last_saved_ = batches;
  return uuid;
}

void Checkpoints::save_async(int64_t batches, const Snapshot& snapshot, const nlohmann::json& metadata) {
  wait();
  nlohmann::json meta = Metadata(batches, metadata);
  Writer writer = snapshot();
  if (!writer) throw CheckpointError("the checkpoint snapshot returned no writer");
  StartInFlight(batches, Unhashed(std::move(writer)), std::move(meta));
}

void Checkpoints::save_async_hashed(int64_t batches, const std::function<HashingWriter()>& snapshot,
                                    const nlohmann::json& metadata) {
  wait();
  nlohmann::json meta = Metadata(batches, metadata);
  HashingWriter writer = snapshot();
  if (!writer) throw CheckpointError("the checkpoint snapshot returned no writer");
  StartInFlight(batches, std::move(writer), std::move(meta));
}

void Checkpoints::StartInFlight(int64_t batches, HashingWriter writer, nlohmann::json meta) {
  StartInFlightJob(batches, [this, batches, writer = std::move(writer), meta = std::move(meta)] {
    return Write(batches, writer, meta);
  });
}

void Checkpoints::StartInFlightJob(int64_t batches, std::function<std::string()> job) {
  in_flight_ = std::async(std::launch::async, [batches, job = std::move(job)] {
    try {
      return job();
    } catch (const std::exception& e) {
      // Thrown again by the next call; said here too, when it happens.
      std::cerr << "[ring.trial] the checkpoint at " << batches
                << " batches written in the background failed; the previous checkpoint stays the latest: "
                << e.what() << std::endl;
      throw;
    }
  });
  last_saved_ = batches;
}

std::optional<std::string> Checkpoints::wait() {
  if (!in_flight_.valid()) return std::nullopt;
  return in_flight_.get();  // leaves it invalid, and rethrows the write's error
}

bool Checkpoints::pending() const {
  return in_flight_.valid() && in_flight_.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}

std::string Checkpoints::NewCheckpointUuid() {
  return api_ ? IssuedUuid() : NewUuid();
}

std::string Checkpoints::Write(int64_t batches, const HashingWriter& writer, const nlohmann::json& meta) {
  const std::string uuid = NewCheckpointUuid();
  fs::path dir;
  try {
    dir = storage_->BeginWrite(uuid);
  } catch (...) {
    storage_->Abort(uuid);
    throw;
  }
  return Finish(uuid, dir, batches, writer, meta);
}

std::string Checkpoints::Finish(const std::string& uuid, const fs::path& dir, int64_t batches,
                                const HashingWriter& writer, const nlohmann::json& meta) {
  std::vector<CheckpointFile> files;
  try {
    std::vector<CheckpointFile> listed = writer(dir);
    // A writer that hashed its bytes started their writeback as it wrote.
    if (listed.empty()) detail::StartWriteback(dir);
    files = detail::ListFiles(dir, std::move(listed));
    WriteManifest(dir, batches, meta, files);
    storage_->Commit(uuid);
  } catch (...) {
    storage_->Abort(uuid);
    throw;
  }
  if (api_) {
    // A run resumed from this checkpoint does not report the steps before it
    // again, so their metrics are stored before it can be resumed from.
    try {
      if (settle_reports_) settle_reports_();
    } catch (...) {  // the master takes no more from this run: never registered
      storage_->Remove(uuid);
      throw;
    }
    Register(uuid, batches, files, meta);
  }
  return uuid;
}

// The master issues each checkpoint's uuid (and so its folder) before it is
// written, and registers no other.
std::string Checkpoints::IssuedUuid() {
  const auto reply = api_->Call("POST", "/checkpoints/prepare", "{}");
  if (!reply.ok()) {
    detail::ThrowIfUnreachableOrEnded(reply, "asking for a checkpoint uuid");
    throw CheckpointError("the master refused a checkpoint uuid: " + detail::Describe(reply));
  }
  if (!reply.body.is_object() || !reply.body.contains("uuid") || !reply.body["uuid"].is_string())
    throw CheckpointError("the master answered a checkpoint uuid request without a uuid: " +
                          reply.body.dump());
  const std::string uuid = reply.body["uuid"].get<std::string>();
  if (uuid.empty() || uuid.find('/') != std::string::npos || uuid.front() == '.')
    throw CheckpointError("the master issued an unusable checkpoint uuid: " + uuid);
  return uuid;
}

void Checkpoints::Register(const std::string& uuid, int64_t batches, const std::vector<CheckpointFile>& files,
                           const nlohmann::json& metadata) {
  const nlohmann::json body = {
      {"uuid", uuid}, {"batches", batches}, {"resources", FilesJson(files)}, {"metadata", metadata}};
  // The same body on every attempt: the master answers 200 to a repeat.
  const auto reply = api_->Call("POST", "/checkpoints", body.dump());
  if (reply.ok()) return;
  const std::string what = "registering checkpoint " + uuid + " at " + std::to_string(batches) + " batches";
  // A 4xx answer means it is not registered, and never will be: drop the files.
  // Without an answer it may be, so they stay.
  if (reply.status >= 400 && reply.status < 500) storage_->Remove(uuid);
  detail::ThrowIfUnreachableOrEnded(reply, what);
  throw CheckpointError("the master refused " + what + ": " + detail::Describe(reply));
}

CheckpointInfo Checkpoints::FetchRecord(const std::string& uuid, const fs::path& dir) {
  CheckpointInfo info;
  info.uuid = uuid;
  info.path = dir;
  if (api_) {
    const auto reply = api_->Call("GET", "/checkpoints/" + uuid);
    if (!reply.ok()) {
      detail::ThrowIfUnreachableOrEnded(reply, "looking up checkpoint " + uuid);
      throw CheckpointError("checkpoint " + uuid + " cannot be looked up: " + detail::Describe(reply));
    }
    ParseRecord(reply.body, "the master's record", info);
    if (reply.body.value("uuid", uuid) != uuid)
      throw CheckpointError("checkpoint " + uuid + ": the master answered with another checkpoint's record");
  } else {
    std::ifstream in(dir / kCheckpointManifest, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const auto manifest = nlohmann::json::parse(text.str(), nullptr, false);
    if (!in || manifest.is_discarded())
      throw CheckpointError("checkpoint " + dir.string() + " has no readable " + kCheckpointManifest +
                            ": it was not completely written");
    ParseRecord(manifest, kCheckpointManifest, info);
  }
  return info;
}

std::optional<CheckpointInfo> Checkpoints::latest() {
  if (resume_.empty()) return std::nullopt;
  const fs::path dir = resume_.has_filename() ? resume_ : resume_.parent_path();  // "dir/" too
  CheckpointInfo info = FetchRecord(dir.filename().string(), dir);
  last_saved_ = info.batches;
  if (validations_) validations_->RestoreFrom(info.metadata);
  return info;
}

CheckpointInfo Checkpoints::restore(const CheckpointInfo& wanted) {
  return Verify(FetchRecord(wanted.uuid, wanted.path));
}

CheckpointInfo Checkpoints::Verify(CheckpointInfo info) {
  for (const auto& f : info.files) {
    const fs::path p = info.path / f.path;
    auto fail = [&](const std::string& why) {
      return CheckpointError("checkpoint " + info.uuid + ": file " + f.path + " " + why);
    };
    std::error_code ec;
    const auto status = fs::symlink_status(p, ec);
    if (ec || !fs::is_regular_file(status)) throw fail("is missing (" + p.string() + ")");
    const auto size = fs::file_size(p, ec);
    if (ec) throw fail("cannot be read: " + ec.message());
    if (size != f.size)
      throw fail("has " + std::to_string(size) + " bytes, expected " + std::to_string(f.size) + " (sha256 " +
                 Sha256File(p) + ", expected " + f.sha256 + ")");
    const std::string sha = Sha256File(p);
    if (sha != f.sha256) throw fail("is corrupted: sha256 " + sha + ", expected " + f.sha256);
  }
  last_saved_ = info.batches;
  return info;
}

std::optional<CheckpointInfo> Checkpoints::latest_verified() {
  auto info = latest();
  if (!info) return std::nullopt;
  return Verify(std::move(*info));
}

bool Checkpoints::due(int64_t batches) const {
  return min_period_ > 0 && batches - last_saved_ >= min_period_;
}

}  // namespace ring::trial
