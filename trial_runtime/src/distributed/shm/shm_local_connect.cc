// ShmLocalGroup::Connect: the leader creates and publishes the segment, the
// other local ranks map it, the leader unlinks it once all have.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "distributed/shm/shm_local_group.h"
#include "ring/trial/errors.h"

namespace ring::trial::shm {
namespace {

constexpr char kSegmentKey[] = "segment";

uint64_t RandomNonce() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

void Validate(const ShmLocalOptions& options) {
  if (options.local_world_size < 1 || options.local_rank < 0 ||
      options.local_rank >= options.local_world_size)
    throw ConfigError("shared-memory group: local rank " + std::to_string(options.local_rank) +
                      " is not in [0, " + std::to_string(options.local_world_size) + ")");
  if (options.slot_bytes < kCacheLine || options.slot_bytes % kCacheLine != 0)
    throw ConfigError("shared-memory group: slot_bytes must be a positive multiple of 64, got " +
                      std::to_string(options.slot_bytes));
  // A reduce-scatter window holds at least one 8-byte element of every rank.
  if (options.slot_bytes < 8 * static_cast<size_t>(options.local_world_size))
    throw ConfigError("shared-memory group: slot_bytes " + std::to_string(options.slot_bytes) +
                      " is too small for " + std::to_string(options.local_world_size) +
                      " local ranks (at least 8 bytes each)");
}

ShmSegment CreateAndPublish(const ShmLocalOptions& options, KeyValueStore& store) {
  const int size = options.local_world_size;
  ShmSegment segment =
      ShmSegment::Create(SegmentName(options.tag, RandomNonce()), SegmentBytes(size, options.slot_bytes));
  auto* header = reinterpret_cast<ShmHeader*>(segment.data());
  header->version = kVersion;
  header->local_world_size = static_cast<uint32_t>(size);
  header->slot_bytes = options.slot_bytes;
  auto* ranks = reinterpret_cast<ShmRankWords*>(segment.data() + RanksOffset());
  std::atomic_ref<uint32_t>(ranks[0].mapped).store(1);
  std::atomic_ref<uint64_t>(header->magic).store(kMagic, std::memory_order_release);
  const std::string& name = segment.name();
  store.set(kSegmentKey, KeyValueStore::Bytes(name.begin(), name.end()));
  return segment;
}

// Waits until every local rank mapped the segment, then unlinks its name.
void AwaitPeersAndUnlink(ShmSegment& segment, int size, Deadline deadline, Timeout timeout) {
  auto* header = reinterpret_cast<ShmHeader*>(segment.data());
  auto* ranks = reinterpret_cast<ShmRankWords*>(segment.data() + RanksOffset());
  std::vector<int> missing;
  for (int k = 1; k < size; ++k)
    if (WaitFor(ranks[k].mapped, ranks[k].waiters, 1, header->aborted, deadline) != WaitResult::kReached)
      missing.push_back(k);
  segment.unlink();
  if (missing.empty()) return;
  std::string list;
  for (int k : missing) list += (list.empty() ? "" : ", ") + std::to_string(k);
  const std::string message = "shared-memory group: local rank" +
                              std::string(missing.size() > 1 ? "s " : " ") + list + " did not map segment " +
                              segment.name() + " within " + std::to_string(timeout.count()) + " ms";
  // A rank that maps it after all fails its first collective with this.
  const size_t n = std::min(message.size(), kAbortReasonBytes - 1);
  std::memcpy(header->reason, message.data(), n);
  header->reason[n] = '\0';
  std::atomic_ref<uint32_t>(header->reason_ready).store(1, std::memory_order_release);
  std::atomic_ref<uint32_t>(header->aborted).store(1);
  for (int k = 0; k < size; ++k) WakeAll(ranks[k].counter);
  throw RendezvousError(message);
}

// Maps the segment the leader published. A name left from an earlier group
// under the same key is retried until the leader publishes the new one.
ShmSegment OpenPublished(const ShmLocalOptions& options, KeyValueStore& store, Deadline deadline) {
  std::string last_error;
  for (;;) {
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (remaining.count() <= 0)
      throw RendezvousError("shared-memory group: local rank " + std::to_string(options.local_rank) +
                            " could not map the leader's segment within " +
                            std::to_string(options.connect_timeout.count()) + " ms" +
                            (last_error.empty() ? "" : ": " + last_error));
    const auto value = store.get(kSegmentKey, remaining);
    const std::string name(value.begin(), value.end());
    try {
      ShmSegment segment = ShmSegment::Open(name);
      const auto* header = reinterpret_cast<const ShmHeader*>(segment.data());
      const int size = options.local_world_size;
      if (segment.size() >= DataOffset(size) &&
          std::atomic_ref<const uint64_t>(header->magic).load(std::memory_order_acquire) == kMagic) {
        if (header->version != kVersion || header->local_world_size != static_cast<uint32_t>(size) ||
            segment.size() != SegmentBytes(size, header->slot_bytes))
          throw ConfigError("shared-memory group: segment " + name + " is for " +
                            std::to_string(header->local_world_size) + " local ranks, this rank expects " +
                            std::to_string(size) + " (LOCAL_WORLD_SIZE differs between local ranks?)");
        return segment;
      }
      last_error = "segment " + name + " is not initialised";
    } catch (const RendezvousError& e) {
      last_error = std::string(e.what()) + " (the leader, local rank 0, may have given up)";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

std::unique_ptr<ShmLocalGroup> ShmLocalGroup::Connect(const ShmLocalOptions& options, KeyValueStore& store) {
  Validate(options);
  const int rank = options.local_rank;
  const int size = options.local_world_size;
  if (size == 1) return std::unique_ptr<ShmLocalGroup>(new ShmLocalGroup(rank, size, std::nullopt));
  const Deadline deadline = Clock::now() + options.connect_timeout;
  if (rank == 0) {
    ShmSegment segment = CreateAndPublish(options, store);
    AwaitPeersAndUnlink(segment, size, deadline, options.connect_timeout);
    return std::unique_ptr<ShmLocalGroup>(new ShmLocalGroup(rank, size, std::move(segment)));
  }
  ShmSegment segment = OpenPublished(options, store, deadline);
  auto* ranks = reinterpret_cast<ShmRankWords*>(segment.data() + RanksOffset());
  Publish(ranks[rank].mapped, ranks[rank].waiters, 1);
  return std::unique_ptr<ShmLocalGroup>(new ShmLocalGroup(rank, size, std::move(segment)));
}

}  // namespace ring::trial::shm
