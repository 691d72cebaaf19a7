#pragma once
// ShmSegment: one POSIX shared-memory object mapped into this process.
// Create() makes a new object (O_EXCL, mode 0600) and sizes it; Open() maps
// an existing one. The creator unlinks the name as soon as every peer has
// mapped it (unlink()), and at the latest when the segment is destroyed, so
// a finished or failed group leaves nothing in /dev/shm. Owned by one
// ShmLocalGroup; not thread-safe.
#include <cstddef>
#include <cstdint>
#include <string>

namespace ring::trial::shm {

class ShmSegment {
 public:
  // Throw RendezvousError naming the object and the system error.
  static ShmSegment Create(const std::string& name, size_t bytes);
  static ShmSegment Open(const std::string& name);

  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  // Removes the name (the mapping stays valid). Idempotent; creator only.
  void unlink();

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  ShmSegment(std::string name, std::byte* data, size_t size, bool linked)
      : name_(std::move(name)), data_(data), size_(size), linked_(linked) {}
  void release();

  std::string name_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool linked_ = false;  // this process created the name and has not unlinked it yet
};

// "/ring-<tag>-<nonce in hex>", with the tag reduced to [A-Za-z0-9._-] and
// at most 100 characters, so the name is valid for shm_open.
std::string SegmentName(const std::string& tag, uint64_t nonce);

}  // namespace ring::trial::shm
