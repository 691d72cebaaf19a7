#pragma once
// Sharded checkpoints: every rank of a multi-rank trial writes its own part
// of one checkpoint, for models whose state is split across the ranks.
//
//   ring::trial::ShardedCheckpoints sharded(ctx);  // on every rank
//   sharded.save(batches, [&](const std::filesystem::path& dir) { WriteMyPart(dir / "part.bin"); });
//   if (auto mine = sharded.latest_verified()) ReadMyPart(mine->path / "part.bin");
//
// A checkpoint holds `rank-<r>/` for each rank r of `world_size` ranks and
// records the count in its metadata ("ring_shards"). Rank 0 takes the uuid
// and makes the temporary folder; each rank writes, hashes and fsyncs its
// part in `rank-<r>/` and reports its files (sizes, SHA-256) through the
// allocation's key-value store; rank 0 waits for every part, writes the
// manifest, moves the folder into place and registers the checkpoint once.
// A rank that fails or dies before that leaves nothing registered: the
// previous checkpoint stays the latest. Every rank must call save (or
// save_async) the same number of times in the same order; each call waits at
// most `timeout` for the other ranks.
//
// Built on the Context's Checkpoints (the same storage, registration,
// validation clock and "at most one in flight": a sharded save_async and a
// plain one share it). Call from the training thread.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ring/trial/checkpoints.h"
#include "ring/trial/kv_store.h"

namespace ring::trial {

class Context;
namespace detail {
class Mailbox;
}

struct ShardOptions {
  // How long a rank waits for the others (for rank 0's uuid, for every
  // part, for rank 0's registration) before the checkpoint fails.
  std::chrono::milliseconds timeout = std::chrono::minutes(10);
  // Checkpoint groups of one trial need distinct names (their store keys).
  std::string name = "default";
};

// The metadata key holding the number of parts of a sharded checkpoint.
inline constexpr const char* kShardsKey = "ring_shards";

class ShardedCheckpoints {
 public:
  // This trial's ranks (RANK, WORLD_SIZE), coordinating through the master's
  // store of the allocation. In local mode with more than one rank there is
  // no such store: ConfigError (pass one, e.g. FileStore(dir)).
  explicit ShardedCheckpoints(Context& ctx, ShardOptions options = {});
  // Explicit ranks and store: tests, and ranks started without the platform.
  ShardedCheckpoints(Checkpoints& checkpoints, int rank, int world_size, std::shared_ptr<KeyValueStore> store,
                     ShardOptions options = {});

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  Checkpoints& checkpoints() { return checkpoints_; }

  // Writes this rank's part with `writer` (given the part's folder) and
  // returns the checkpoint's uuid once rank 0 registered it, on every rank.
  // Rank 0's metadata is the checkpoint's. Throws CheckpointError when any
  // rank's part fails or a rank does not answer within the timeout.
  std::string save(int64_t batches, const Checkpoints::Writer& writer,
                   const nlohmann::json& metadata = nlohmann::json::object());

  // The same in the background, as Checkpoints::save_async: `snapshot` runs
  // here and the writer it returns on a background thread; wait() returns
  // the uuid once the checkpoint is registered.
  void save_async(int64_t batches, const Checkpoints::Snapshot& snapshot,
                  const nlohmann::json& metadata = nlohmann::json::object());
  void save_async_hashed(int64_t batches, const std::function<Checkpoints::HashingWriter()>& snapshot,
                         const nlohmann::json& metadata = nlohmann::json::object());
  std::optional<std::string> wait() { return checkpoints_.wait(); }

  // This rank's part of `info`: its files checked against the registration,
  // returned with `path` the part's folder and `files` relative to it.
  // Throws CheckpointError when the checkpoint is not sharded or was written
  // by another number of ranks (ShardPath then reaches every part, for a
  // trial that re-splits its state itself).
  CheckpointInfo restore(const CheckpointInfo& info);
  // The checkpoint this run resumes from, this rank's part verified;
  // nullopt when starting afresh.
  std::optional<CheckpointInfo> latest_verified();

 private:
  // One sharded checkpoint, every step of it on this rank; runs on the
  // training thread (save) or the background thread (save_async).
  std::string Write(int64_t sequence, int64_t batches, const Checkpoints::HashingWriter& writer,
                    const nlohmann::json& meta) const;
  std::string WriteAsRoot(detail::Mailbox& mail, int64_t batches, const Checkpoints::HashingWriter& writer,
                          const nlohmann::json& meta) const;
  std::string WriteAsPart(detail::Mailbox& mail, const Checkpoints::HashingWriter& writer) const;
  // The store keys of a checkpoint's messages (two slots taken in turn).
  std::string Prefix(int64_t sequence) const;

  Checkpoints& checkpoints_;
  int rank_ = 0;
  int world_size_ = 1;
  std::shared_ptr<KeyValueStore> store_;
  ShardOptions options_;
  int64_t sequence_ = 0;  // checkpoints started by this rank; the same on every rank
};

// The number of parts of a checkpoint (its "ring_shards" metadata); 0 when
// it was not written by ShardedCheckpoints.
int ShardCount(const CheckpointInfo& info);
// The folder of `rank`'s part of a sharded checkpoint.
std::filesystem::path ShardPath(const CheckpointInfo& info, int rank);

}  // namespace ring::trial
