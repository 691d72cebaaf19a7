#include "master/files/file_stream.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace ring {
namespace {

class FileStream final : public BodyStream {
 public:
  FileStream(UniqueFd fd, uint64_t size, std::shared_ptr<void> slot)
      : fd_(std::move(fd)), left_(size), slot_(std::move(slot)) {}

  Result<size_t> Read(char* out, size_t size) override {
    if (left_ == 0) return size_t{0};
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left_, size));
    ssize_t n = ::read(fd_.get(), out, want);
    while (n < 0 && errno == EINTR) n = ::read(fd_.get(), out, want);
    if (n < 0) return Unavailable(std::string("cannot read the file being sent: ") + std::strerror(errno));
    if (n == 0) return Internal("the file being sent ended early");
    left_ -= static_cast<uint64_t>(n);
    return static_cast<size_t>(n);
  }

 private:
  UniqueFd fd_;
  uint64_t left_;
  std::shared_ptr<void> slot_;
};

}  // namespace

std::unique_ptr<BodyStream> MakeFileStream(UniqueFd fd, uint64_t size, std::shared_ptr<void> slot) {
  return std::make_unique<FileStream>(std::move(fd), size, std::move(slot));
}

}  // namespace ring
