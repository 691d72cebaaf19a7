#include "ring/trial/checkpoints_sharded.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <thread>

#include "checkpoints_files.h"
#include "ring/trial/context.h"

namespace ring::trial {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
namespace {

std::string PartName(int rank) {
  return "rank-" + std::to_string(rank);
}

// The messages of one sharded checkpoint, under the keys of its slot.
// Checkpoints take turns between two slots, so an allocation's store holds
// a bounded number of keys however many are written (the master keeps at
// most 10,000 per allocation): a rank only starts checkpoint n once it has
// finished n - 1, and rank 0 finishes n - 1 only once every rank has
// reported its part of it, so no rank still reads a key of n - 2 when n
// overwrites it. Every message carries its checkpoint's sequence number; a
// reader that finds the previous turn's message waits for the new one.
}  // namespace

namespace detail {

class Mailbox {
 public:
  Mailbox(KeyValueStore& store, std::string prefix, int64_t sequence)
      : store_(store), prefix_(std::move(prefix)), sequence_(sequence) {}

  // A store that cannot be reached while reporting a failure must not hide
  // the failure itself (best_effort).
  void Publish(const std::string& what, nlohmann::json message, bool best_effort) {
    message["sequence"] = sequence_;
    const std::string text = message.dump();
    try {
      store_.set(prefix_ + what, {text.begin(), text.end()});
    } catch (const TrialError&) {
      if (!best_effort) throw;
    }
  }

  // Waits for another rank's message; `whose` names it in errors.
  nlohmann::json Receive(const std::string& what, Clock::time_point deadline, const std::string& whose) {
    const std::string key = prefix_ + what;
    auto pause = std::chrono::milliseconds(5);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      KeyValueStore::Bytes bytes;
      try {
        bytes = store_.get(key, std::max(left, std::chrono::milliseconds(1)));
      } catch (const TrialError& e) {
        throw CheckpointError("sharded checkpoint: " + whose + " did not arrive: " + e.what());
      }
      auto message = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
      if (!message.is_object() || !message.value("sequence", nlohmann::json()).is_number_integer())
        throw CheckpointError("sharded checkpoint: " + whose +
                              " is not a message of this runtime (store key " + key + ")");
      const int64_t sequence = message["sequence"].get<int64_t>();
      if (sequence > sequence_)
        throw CheckpointError("sharded checkpoint: " + whose + " belongs to a later checkpoint (" +
                              std::to_string(sequence) + ", this is " + std::to_string(sequence_) +
                              "): the ranks no longer save in step");
      if (sequence == sequence_) {
        if (message.contains("error"))
          throw CheckpointError("sharded checkpoint: " + whose +
                                " is a failure: " + message.value("error", ""));
        return message;
      }
      if (Clock::now() >= deadline)  // still the previous turn's message
        throw CheckpointError("sharded checkpoint: " + whose + " did not arrive: store key " + key +
                              " still holds checkpoint " + std::to_string(sequence) + "'s");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(100));
    }
  }

 private:
  KeyValueStore& store_;
  std::string prefix_;
  int64_t sequence_;
};

}  // namespace detail

namespace {
using detail::Mailbox;

nlohmann::json FilesJson(const std::vector<CheckpointFile>& files) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : files) out.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  return out;
}

std::vector<CheckpointFile> FilesOf(const nlohmann::json& message, const std::string& prefix, int rank) {
  std::vector<CheckpointFile> files;
  const auto list = message.find("files");
  if (list == message.end() || !list->is_array())
    throw CheckpointError("sharded checkpoint: rank " + std::to_string(rank) + " reported no file list");
  for (const auto& f : *list) {
    if (!f.is_object() || !f.value("path", nlohmann::json()).is_string() ||
        !f.value("size", nlohmann::json()).is_number_unsigned() ||
        !f.value("sha256", nlohmann::json()).is_string())
      throw CheckpointError("sharded checkpoint: rank " + std::to_string(rank) +
                            " reported a malformed file " + f.dump());
    const std::string path = f["path"].get<std::string>();
    if (path.rfind(prefix, 0) != 0)
      throw CheckpointError("sharded checkpoint: rank " + std::to_string(rank) + " reported " + path +
                            ", outside its part " + prefix);
    files.push_back({path, f["size"].get<uint64_t>(), f["sha256"].get<std::string>()});
  }
  return files;
}

// Writes `rank`'s part into <dir>/rank-<rank>, hashes what the writer did
// not, and makes every file durable: the part's files, paths relative to
// the checkpoint.
std::vector<CheckpointFile> WritePart(const fs::path& dir, int rank,
                                      const Checkpoints::HashingWriter& writer) {
  const fs::path part = dir / PartName(rank);
  if (::mkdir(part.c_str(), 0700) != 0)
    throw CheckpointError("cannot create " + part.string() + ": " + std::strerror(errno));
  std::vector<CheckpointFile> files = detail::ListFiles(part, writer(part));
  detail::SyncTree(part);
  for (auto& f : files) f.path = PartName(rank) + "/" + f.path;
  return files;
}

Checkpoints::HashingWriter Unhashed(Checkpoints::Writer writer) {
  return [writer = std::move(writer)](const fs::path& dir) {
    writer(dir);
    return std::vector<CheckpointFile>{};
  };
}

bool IsKeyName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

// The allocation's store; in local mode each process would have its own,
// which ranks of other processes never see.
std::shared_ptr<KeyValueStore> StoreOf(const Context& ctx) {
  if (ctx.is_local() && ctx.world_size() > 1)
    throw ConfigError("sharded checkpoints in local mode with WORLD_SIZE " +
                      std::to_string(ctx.world_size()) +
                      " need a store every rank reaches: pass one, e.g. FileStore(dir)");
  return AllocationStore(ctx);
}

}  // namespace

ShardedCheckpoints::ShardedCheckpoints(Context& ctx, ShardOptions options)
    : ShardedCheckpoints(ctx.checkpoints(), ctx.rank(), ctx.world_size(), StoreOf(ctx), std::move(options)) {}

ShardedCheckpoints::ShardedCheckpoints(Checkpoints& checkpoints, int rank, int world_size,
                                       std::shared_ptr<KeyValueStore> store, ShardOptions options)
    : checkpoints_(checkpoints),
      rank_(rank),
      world_size_(world_size),
      store_(store ? std::move(store) : InMemoryStore()),
      options_(std::move(options)) {
  if (world_size_ < 1 || rank_ < 0 || rank_ >= world_size_)
    throw ConfigError("sharded checkpoints: rank " + std::to_string(rank_) + " is not within a world of " +
                      std::to_string(world_size_));
  if (options_.timeout <= std::chrono::milliseconds(0))
    throw ConfigError("sharded checkpoints: the timeout must be positive");
  if (!IsKeyName(options_.name))
    throw ConfigError("sharded checkpoints: the name \"" + options_.name +
                      "\" must be 1 to 64 of A-Z a-z 0-9 . _ -");
}

std::string ShardedCheckpoints::Prefix(int64_t sequence) const {
  return "ring.checkpoints/" + options_.name + "/" + std::to_string(sequence % 2) + "/";
}

std::string ShardedCheckpoints::save(int64_t batches, const Checkpoints::Writer& writer,
                                     const nlohmann::json& metadata) {
  checkpoints_.wait();
  nlohmann::json meta = checkpoints_.Metadata(batches, metadata);
  meta[kShardsKey] = world_size_;
  const std::string uuid = Write(sequence_++, batches, Unhashed(writer), meta);
  checkpoints_.last_saved_ = batches;
  return uuid;
}

void ShardedCheckpoints::save_async(int64_t batches, const Checkpoints::Snapshot& snapshot,
                                    const nlohmann::json& metadata) {
  save_async_hashed(
      batches,
      [&snapshot] {
        Checkpoints::Writer writer = snapshot();
        if (!writer) throw CheckpointError("the checkpoint snapshot returned no writer");
        return Unhashed(std::move(writer));
      },
      metadata);
}

void ShardedCheckpoints::save_async_hashed(int64_t batches,
                                           const std::function<Checkpoints::HashingWriter()>& snapshot,
                                           const nlohmann::json& metadata) {
  checkpoints_.wait();
  nlohmann::json meta = checkpoints_.Metadata(batches, metadata);
  meta[kShardsKey] = world_size_;
  Checkpoints::HashingWriter writer = snapshot();
  if (!writer) throw CheckpointError("the checkpoint snapshot returned no writer");
  const int64_t sequence = sequence_++;
  // A copy of this group (the store shared): the job may outlive this object.
  checkpoints_.StartInFlightJob(
      batches, [self = *this, sequence, batches, writer = std::move(writer), meta = std::move(meta)] {
        return self.Write(sequence, batches, writer, meta);
      });
}

std::string ShardedCheckpoints::Write(int64_t sequence, int64_t batches,
                                      const Checkpoints::HashingWriter& writer,
                                      const nlohmann::json& meta) const {
  Mailbox mail(*store_, Prefix(sequence), sequence);
  return rank_ == 0 ? WriteAsRoot(mail, batches, writer, meta) : WriteAsPart(mail, writer);
}

// Rank 0: takes the uuid and the folder, writes its part, waits for every
// other part, then commits and registers the whole once.
std::string ShardedCheckpoints::WriteAsRoot(Mailbox& mail, int64_t batches,
                                            const Checkpoints::HashingWriter& writer,
                                            const nlohmann::json& meta) const {
  CheckpointStorage& storage = *checkpoints_.storage_;
  std::string uuid;
  fs::path dir;
  try {
    uuid = checkpoints_.NewCheckpointUuid();
    try {
      dir = storage.BeginWrite(uuid);
    } catch (...) {
      storage.Abort(uuid);
      throw;
    }
  } catch (const std::exception& e) {
    mail.Publish("uuid", {{"error", std::string("rank 0: ") + e.what()}}, true);
    throw;
  }
  mail.Publish("uuid", {{"uuid", uuid}}, false);
  try {
    const auto deadline = Clock::now() + options_.timeout;
    Checkpoints::HashingWriter every_part = [&](const fs::path& tmp) {
      std::vector<CheckpointFile> files = WritePart(tmp, 0, writer);
      for (int r = 1; r < world_size_; ++r) {
        const auto part = mail.Receive("part/" + std::to_string(r), deadline,
                                       "rank " + std::to_string(r) + "'s part of checkpoint " + uuid);
        for (auto& f : FilesOf(part, PartName(r) + "/", r)) files.push_back(std::move(f));
      }
      return files;
    };
    const std::string done = checkpoints_.Finish(uuid, dir, batches, every_part, meta);
    mail.Publish("done", {{"uuid", done}}, false);
    return done;
  } catch (const std::exception& e) {
    mail.Publish("done", {{"error", std::string("rank 0: ") + e.what()}}, true);
    throw;
  }
}

// Any other rank: writes its part into rank 0's folder, reports it, and
// waits until rank 0 registered the checkpoint (or says why not).
std::string ShardedCheckpoints::WriteAsPart(Mailbox& mail, const Checkpoints::HashingWriter& writer) const {
  const auto deadline = Clock::now() + options_.timeout;
  const auto started = mail.Receive("uuid", deadline, "the uuid from rank 0");
  const std::string uuid = started.value("uuid", "");
  if (uuid.empty() || uuid.find('/') != std::string::npos || uuid.front() == '.')
    throw CheckpointError("sharded checkpoint: rank 0 sent an unusable uuid \"" + uuid + "\"");
  const std::string part_key = "part/" + std::to_string(rank_);
  try {
    const auto files = WritePart(checkpoints_.storage_->WriteDir(uuid), rank_, writer);
    mail.Publish(part_key, {{"files", FilesJson(files)}}, false);
  } catch (const std::exception& e) {
    mail.Publish(part_key, {{"error", "rank " + std::to_string(rank_) + ": " + e.what()}}, true);
    throw;
  }
  mail.Receive("done", Clock::now() + options_.timeout, "rank 0's registration of checkpoint " + uuid);
  return uuid;
}

CheckpointInfo ShardedCheckpoints::restore(const CheckpointInfo& wanted) {
  CheckpointInfo all = checkpoints_.FetchRecord(wanted.uuid, wanted.path);
  const int shards = ShardCount(all);
  if (shards == 0)
    throw CheckpointError("checkpoint " + all.uuid +
                          " was not written in parts: every rank restores it whole (Checkpoints::restore)");
  if (shards != world_size_)
    throw CheckpointError("checkpoint " + all.uuid + " holds the parts of " + std::to_string(shards) +
                          " ranks and this trial runs " + std::to_string(world_size_) + ", so rank " +
                          std::to_string(rank_) + " has no part of its own: resume it with " +
                          std::to_string(shards) +
                          " ranks (resources.slots_per_trial), or read every part (ShardPath) and split "
                          "the state again");
  const std::string prefix = PartName(rank_) + "/";
  CheckpointInfo mine = all;
  mine.files.clear();
  for (const auto& f : all.files)
    if (f.path.rfind(prefix, 0) == 0) mine.files.push_back(f);
  mine = checkpoints_.Verify(std::move(mine));
  mine.path = ShardPath(all, rank_);
  for (auto& f : mine.files) f.path = f.path.substr(prefix.size());
  return mine;
}

std::optional<CheckpointInfo> ShardedCheckpoints::latest_verified() {
  auto info = checkpoints_.latest();
  if (!info) return std::nullopt;
  return restore(*info);
}

int ShardCount(const CheckpointInfo& info) {
  const auto it = info.metadata.find(kShardsKey);
  if (it == info.metadata.end() || !it->is_number_integer() || it->get<int64_t>() < 1) return 0;
  return static_cast<int>(it->get<int64_t>());
}

fs::path ShardPath(const CheckpointInfo& info, int rank) {
  return info.path / PartName(rank);
}

}  // namespace ring::trial
