#include "distributed/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "ring/trial/errors.h"

namespace ring::trial::shm {
namespace {

[[noreturn]] void Fail(const std::string& what, const std::string& name, int error) {
  throw RendezvousError("shared memory: " + what + " " + name + " failed: " + std::strerror(error));
}

std::byte* Map(int fd, size_t bytes, const std::string& name) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) Fail("mmap of", name, errno);
  return static_cast<std::byte*>(p);
}

}  // namespace

ShmSegment ShmSegment::Create(const std::string& name, size_t bytes) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) Fail("shm_open(O_CREAT | O_EXCL) of", name, errno);
  // posix_fallocate reserves the pages now, so a full /dev/shm fails here
  // with ENOSPC rather than with SIGBUS at the first touch.
  int error = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (error == EOPNOTSUPP || error == EINVAL)
    error = ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  if (error != 0) {
    close(fd);
    shm_unlink(name.c_str());
    Fail("sizing (" + std::to_string(bytes) + " bytes) of", name, error);
  }
  std::byte* data = nullptr;
  try {
    data = Map(fd, bytes, name);
  } catch (...) {
    close(fd);
    shm_unlink(name.c_str());
    throw;
  }
  close(fd);
  return ShmSegment(name, data, bytes, /*linked=*/true);
}

ShmSegment ShmSegment::Open(const std::string& name) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) Fail("shm_open of", name, errno);
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    Fail("fstat of", name, error);
  }
  const auto bytes = static_cast<size_t>(st.st_size);
  std::byte* data = nullptr;
  try {
    data = Map(fd, bytes, name);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  return ShmSegment(name, data, bytes, /*linked=*/false);
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(std::move(other.name_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      linked_(std::exchange(other.linked_, false)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    release();
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    linked_ = std::exchange(other.linked_, false);
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  release();
}

void ShmSegment::unlink() {
  if (!linked_) return;
  shm_unlink(name_.c_str());
  linked_ = false;
}

void ShmSegment::release() {
  unlink();
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

std::string SegmentName(const std::string& tag, uint64_t nonce) {
  std::string clean;
  for (char c : tag) {
    if (clean.size() == 100) break;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    clean.push_back(ok ? c : '_');
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, nonce >>= 4) hex[static_cast<size_t>(i)] = kHex[nonce & 0xf];
  return "/ring-" + clean + "-" + hex;
}

}  // namespace ring::trial::shm
