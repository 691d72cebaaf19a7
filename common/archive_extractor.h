#pragma once
// Internal to common/archive.cc: reads a tar.gz entry by entry, checks every
// entry, and (given a destination) writes it.
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/archive.h"

struct archive;
struct archive_entry;

namespace ring {

// One pass over one archive, owned by the call that runs it (one thread).
// Limits are enforced while reading, entry by entry. Refused: absolute paths,
// "..", names given twice, devices, pipes and sockets, symlinks that resolve
// outside the folder (following the archive's other links) or in a loop, hard links to anything but a
// regular file earlier in the archive, and entries below a link or a file.
// Checks that need every name run after the last entry, so UnpackArchive runs
// one pass without a destination before the pass that writes.
class ArchiveExtractor {
 public:
  ArchiveExtractor(const UnpackLimits& limits, const std::filesystem::path* dest)
      : limits_(limits), dest_(dest) {}

  Status Run(const std::string& tar_gz);

 private:
  Status Next(struct archive* a, struct archive_entry* entry);
  // `raw` without "./", empty and "." parts; refuses absolute paths and "..".
  Status Normalize(const char* raw, const char* what, std::string& name) const;
  Status Register(const std::string& name, char kind);
  Status CheckTree() const;
  // Refuses writing `name` where dest already holds a link on its way.
  Status CheckOnDisk(const std::string& name) const;
  Status ReadFile(struct archive* a, struct archive_entry* entry, const std::string& name);
  Status CheckLink(const std::string& name, const std::string& target) const;
  bool Resolve(std::vector<std::string>& at, const std::string& target, int& hops) const;
  Status CopyFile(const std::string& from, const std::string& to) const;

  const UnpackLimits& limits_;
  const std::filesystem::path* dest_;  // null: check only
  uint64_t files_ = 0;
  uint64_t bytes_ = 0;
  std::map<std::string, char> kinds_;         // name -> 'd' folder, 'f' file, 'l' symlink
  std::map<std::string, uint64_t> sizes_;     // files (and hard links) -> bytes
  std::map<std::string, std::string> links_;  // symlink -> target as written
};

}  // namespace ring
