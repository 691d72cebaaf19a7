#pragma once
// Checkpoints of a trial: written atomically into checkpoint storage, then
// registered with the master (file list, sizes, SHA-256), and verified
// against that registration before a restore.
//
//   std::string uuid = ctx.checkpoints().save(batches, [&](const std::filesystem::path& dir) {
//     WriteState(dir / "state.bin");
//   });
//   if (auto latest = ctx.checkpoints().latest_verified()) LoadState(latest->path / "state.bin");
//
// Every checkpoint also carries `.ring-checkpoint.json` (batches, metadata and
// the same file list), which is what local mode verifies against.
// Owned by the Context; call from the training thread (the chief in
// multi-rank trials).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ring/trial/checkpoint_storage.h"
#include "ring/trial/errors.h"

namespace ring::trial {

// A checkpoint is incomplete, corrupted, or cannot be stored or registered.
class CheckpointError : public TrialError {
 public:
  using TrialError::TrialError;
};

struct CheckpointFile {
  std::string path;  // relative to the checkpoint directory
  uint64_t size = 0;
  std::string sha256;  // lower-case hex
};

struct CheckpointInfo {
  std::string uuid;
  std::filesystem::path path;  // the checkpoint directory
  int64_t batches = 0;
  nlohmann::json metadata = nlohmann::json::object();
  std::vector<CheckpointFile> files;  // as registered
};

// The name of the manifest inside every checkpoint directory.
inline constexpr const char* kCheckpointManifest = ".ring-checkpoint.json";

namespace detail {
class TrialApi;
class ValidationClock;
}  // namespace detail

class Context;

class Checkpoints {
 public:
  // Receives the (temporary) directory to write the checkpoint's files into.
  using Writer = std::function<void(const std::filesystem::path& dir)>;

  // `api` is null in local mode; `resume` is the directory to resume from, if any.
  Checkpoints(std::unique_ptr<CheckpointStorage> storage, std::shared_ptr<detail::TrialApi> api,
              std::filesystem::path resume, int64_t min_period_batches);
  ~Checkpoints();

  // Writes a checkpoint with `writer` into a temporary directory, records every
  // file's size and SHA-256, fsyncs, moves it into place and registers it
  // (retried; a retry is idempotent). Returns its uuid. Nothing is registered
  // when the writer throws or any step fails. Throws CheckpointError,
  // AllocationEndedError (the master fenced this allocation out; the
  // checkpoint is deleted) or MasterUnreachableError (the checkpoint is kept:
  // the master may have registered it). When the experiment sets
  // min_validation_period, the metadata also records
  // "ring_last_validation_batches", which a resumed run takes back (see
  // Context::validation_due()).
  std::string save(int64_t batches, const Writer& writer,
                   const nlohmann::json& metadata = nlohmann::json::object());

  // What save_async calls on the training thread: it copies the state the
  // checkpoint holds (into memory it owns) and returns the writer of that
  // copy, which then runs on a background thread.
  using Snapshot = std::function<Writer()>;

  // A checkpoint that does not stall training: waits for the one still in
  // flight (at most one is), calls `snapshot` here, and returns while the
  // copy is written, checksummed, made durable and registered in the
  // background exactly as save() does it (the same atomicity: a crash
  // before it is registered leaves the previous checkpoint the latest). Its
  // error, if any, is thrown by the next save_async, save or wait. due()
  // counts from `batches` at once.
  void save_async(int64_t batches, const Snapshot& snapshot,
                  const nlohmann::json& metadata = nlohmann::json::object());

  // A writer that knows the digests of what it writes (it hashes its bytes
  // in memory, while they go to disk): it returns every file it wrote with
  // its size and SHA-256. The runtime checks that the folder holds exactly
  // those files with those sizes and hashes none again; a restore still
  // checks every byte on disk against them.
  using HashingWriter = std::function<std::vector<CheckpointFile>(const std::filesystem::path& dir)>;
  // save_async with such a writer (what the Python module's buffers use).
  void save_async_hashed(int64_t batches, const std::function<HashingWriter()>& snapshot,
                         const nlohmann::json& metadata = nlohmann::json::object());

  // One file of a copy-on-write checkpoint: its path relative to the
  // checkpoint directory and its bytes in this process's memory.
  struct Bytes {
    std::string path;
    const void* data = nullptr;
    size_t size = 0;
  };

  // A checkpoint that copies nothing on the training thread: waits for the
  // one in flight, asks for its uuid, then fork()s a writer process that
  // writes and hashes `files` from its copy-on-write view of this process's
  // memory (plain system calls only: no locks, no allocation, no libtorch),
  // and returns. The state may change at once: the kernel copies a page the
  // training thread writes to while the writer still holds it. A background
  // thread reaps the writer and then commits and registers the checkpoint
  // exactly as save() does; a writer that fails or is killed leaves the
  // previous checkpoint the latest, is reported on stderr (the trial log)
  // and is thrown by the next save, save_async, save_forked or wait. Call it
  // between steps, with no other thread changing `files` at that moment.
  // The writer dies with the thread that called this (PR_SET_PDEATHSIG).
  void save_forked(int64_t batches, const std::vector<Bytes>& files,
                   const nlohmann::json& metadata = nlohmann::json::object());

  // Waits for the checkpoint in flight: its uuid, nullopt when none was;
  // throws what its write threw. Preemption::acknowledge() and the
  // Context's end wait too, so a trial that stops has its last checkpoint.
  std::optional<std::string> wait();
  bool pending() const;

  // The checkpoint this run resumes from (RING_LATEST_CHECKPOINT, --resume),
  // as registered; nullopt when starting afresh. Its files are not checked:
  // restore() does that.
  std::optional<CheckpointInfo> latest();

  // Checks every file of checkpoint `info.uuid` in `info.path` (size and
  // SHA-256) against its registration (the master's record; the manifest in
  // local mode) and returns that registration. Throws CheckpointError naming
  // the file with the expected and actual checksum on any mismatch.
  CheckpointInfo restore(const CheckpointInfo& info);

  // latest() then restore(): what a trial calls at start.
  std::optional<CheckpointInfo> latest_verified();

  // True when at least min_checkpoint_period.batches have passed since the
  // last save (or the checkpoint resumed from, or the start); always false
  // when the experiment sets no period (the trial then decides alone).
  bool due(int64_t batches) const;

 private:
  friend class Context;             // attaches the validation clock and settle_reports_
  friend class ShardedCheckpoints;  // writes the parts of one checkpoint through these steps

  // Prepares the metadata (the validation clock's included) of a checkpoint at `batches`.
  nlohmann::json Metadata(int64_t batches, const nlohmann::json& metadata) const;
  // Writes, commits and registers a checkpoint (save's steps after its
  // metadata): its uuid. Any thread; one at a time.
  std::string Write(int64_t batches, const HashingWriter& writer, const nlohmann::json& meta);
  // Write's steps once `dir` (BeginWrite of `uuid`) exists: write, list,
  // manifest, commit, register. Aborts the write on any failure.
  std::string Finish(const std::string& uuid, const std::filesystem::path& dir, int64_t batches,
                     const HashingWriter& writer, const nlohmann::json& meta);
  // A uuid for a new checkpoint: the master's, or a fresh one in local mode.
  std::string NewCheckpointUuid();
  void StartInFlight(int64_t batches, HashingWriter writer, nlohmann::json meta);
  // Runs `job` in the background as the one checkpoint in flight; a failure
  // is also printed to stderr, the trial's log.
  void StartInFlightJob(int64_t batches, std::function<std::string()> job);
  CheckpointInfo FetchRecord(const std::string& uuid, const std::filesystem::path& dir);
  CheckpointInfo Verify(CheckpointInfo info);  // checks info.files in info.path
  void Register(const std::string& uuid, int64_t batches, const std::vector<CheckpointFile>& files,
                const nlohmann::json& metadata);
  std::string IssuedUuid();  // POST .../checkpoints/prepare

  std::unique_ptr<CheckpointStorage> storage_;
  std::shared_ptr<detail::TrialApi> api_;
  std::filesystem::path resume_;
  int64_t min_period_ = 0;
  int64_t last_saved_ = 0;
  // Recorded in and restored from the metadata when min_validation_period is set.
  std::shared_ptr<detail::ValidationClock> validations_;
  // Waits until the metric reports made so far are acknowledged (the chief's
  // reporter); called before a checkpoint is registered.
  std::function<void()> settle_reports_;
  // The background write of save_async, while one is in flight.
  std::future<std::string> in_flight_;
};

// SHA-256 of a file's content, lower-case hex. Throws CheckpointError when
// the file cannot be read.
std::string Sha256File(const std::filesystem::path& path);
// The same of `size` bytes in memory.
std::string Sha256Bytes(const void* data, size_t size);

}  // namespace ring::trial
