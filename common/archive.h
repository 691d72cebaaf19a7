#pragma once
// Model definitions travel as tar.gz (libarchive). Packing honours a
// `.ringignore` file (gitignore-style patterns, one per line, '#' comments)
// at the folder's root; unpacking refuses absolute paths, "..", links that
// leave the destination, and archives over the given limits.
#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"

namespace ring {

struct PackOptions {
  uint64_t max_bytes = 64ull << 20;  // total size of the files packed
  // Called with (bytes done, bytes total) while packing; may be empty.
  std::function<void(uint64_t, uint64_t)> progress;
};

// Packs the regular files and directories below `dir` into a tar.gz held in
// memory. A folder over max_bytes is refused with a message giving both sizes.
Result<std::string> PackDirectory(const std::string& dir, const PackOptions& options = {});

struct UnpackLimits {
  uint64_t max_files = 10000;
  uint64_t max_total_bytes = 1ull << 30;
};

// Unpacks a tar.gz held in memory into `dest` (created if missing).
Status UnpackArchive(const std::string& tar_gz, const std::string& dest, const UnpackLimits& limits = {});

// Checks that `tar_gz` is a readable tar.gz within limits without writing files.
Status ValidateArchive(const std::string& tar_gz, const UnpackLimits& limits = {});

std::string Base64Encode(std::string_view data);
Result<std::string> Base64Decode(std::string_view text);

}  // namespace ring
