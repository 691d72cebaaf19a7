#include "ring/trial/checkpoints.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>

#include "trial_api.h"

namespace ring::trial {
namespace fs = std::filesystem;
namespace {

constexpr const char* kManifest = ".ring-checkpoint.json";

std::string NewUuid() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  uint64_t hi = gen(), lo = gen();
  hi = (hi & 0xffffffffffff0fffull) | 0x0000000000004000ull;  // version 4
  lo = (lo & 0x3fffffffffffffffull) | 0x8000000000000000ull;  // variant 1
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48), static_cast<unsigned long long>(lo & 0xffffffffffffull));
  return buf;
}

nlohmann::json FilesJson(const std::vector<CheckpointFile>& files) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : files) out.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  return out;
}

std::vector<CheckpointFile> FilesFromJson(const nlohmann::json& j) {
  std::vector<CheckpointFile> out;
  if (!j.is_array()) return out;
  for (const auto& f : j)
    out.push_back({f.value("path", ""), f.value("size", uint64_t{0}), f.value("sha256", "")});
  return out;
}

}  // namespace

Checkpoints::Checkpoints(std::unique_ptr<CheckpointStorage> storage, std::shared_ptr<detail::TrialApi> api,
                         fs::path resume, int64_t min_period_batches)
    : storage_(std::move(storage)),
      api_(std::move(api)),
      resume_(std::move(resume)),
      min_period_(min_period_batches) {}

Checkpoints::~Checkpoints() = default;

std::string Checkpoints::save(int64_t batches, const Writer& writer, const nlohmann::json& metadata) {
  if (batches < 0) throw CheckpointError("a checkpoint cannot be at negative batches");
  const std::string uuid = NewUuid();
  const fs::path dir = storage_->BeginWrite(uuid);
  std::vector<CheckpointFile> files;
  try {
    writer(dir);
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      const std::string rel = fs::relative(entry.path(), dir).generic_string();
      files.push_back({rel, static_cast<uint64_t>(entry.file_size()), Sha256File(entry.path())});
    }
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    nlohmann::json manifest = {
        {"uuid", uuid}, {"batches", batches}, {"metadata", metadata}, {"resources", FilesJson(files)}};
    std::ofstream(dir / kManifest) << manifest.dump(2) << "\n";
  } catch (...) {
    storage_->Abort(uuid);
    throw;
  }
  const fs::path final_dir = storage_->Commit(uuid);
  if (api_) {
    nlohmann::json body = {
        {"uuid", uuid}, {"batches", batches}, {"resources", FilesJson(files)}, {"metadata", metadata}};
    auto reply = api_->Call("POST", "/checkpoints", body.dump());
    if (!reply.ok())
      throw CheckpointError("checkpoint " + uuid + " at " + std::to_string(batches) +
                            " batches was written but could not be registered: " +
                            (reply.status ? "HTTP " + std::to_string(reply.status) + ": " : "") +
                            reply.error);
  }
  last_saved_ = batches;
  return uuid;
}

std::optional<CheckpointInfo> Checkpoints::latest() {
  if (resume_.empty()) return std::nullopt;
  CheckpointInfo info;
  info.path = resume_;
  info.uuid = resume_.filename().string();
  nlohmann::json record;
  if (api_) {
    auto reply = api_->Call("GET", "/checkpoints/" + info.uuid);
    if (!reply.ok() || !reply.body.is_object())
      throw CheckpointError("checkpoint " + info.uuid + " cannot be looked up: " + reply.error);
    record = reply.body;
  } else {
    std::ifstream in(resume_ / kManifest);
    record = nlohmann::json::parse(in, nullptr, false);
    if (!in || record.is_discarded() || !record.is_object())
      throw CheckpointError("checkpoint " + resume_.string() + " has no readable " + kManifest);
  }
  info.batches = record.value("batches", int64_t{0});
  info.metadata = record.value("metadata", nlohmann::json::object());
  info.files = FilesFromJson(record.value("resources", nlohmann::json::array()));
  for (const auto& f : info.files) {
    const fs::path p = resume_ / f.path;
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    if (ec) throw CheckpointError("checkpoint " + info.uuid + ": file " + f.path + " is missing");
    if (size != f.size)
      throw CheckpointError("checkpoint " + info.uuid + ": file " + f.path + " has " + std::to_string(size) +
                            " bytes, expected " + std::to_string(f.size));
    const std::string sha = Sha256File(p);
    if (sha != f.sha256)
      throw CheckpointError("checkpoint " + info.uuid + ": file " + f.path + " is corrupted: sha256 " + sha +
                            ", expected " + f.sha256);
  }
  last_saved_ = info.batches;
  return info;
}

bool Checkpoints::due(int64_t batches) const {
  return min_period_ > 0 && batches - last_saved_ >= min_period_;
}

}  // namespace ring::trial
