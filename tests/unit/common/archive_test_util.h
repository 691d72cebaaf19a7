#pragma once
// Helpers of the archive tests: a scratch folder per test, and tar.gz files
// crafted entry by entry with libarchive's writer, to build archives that
// PackDirectory never makes (escaping paths, links, devices).
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/status.h"

namespace ring {
// Failed expectations print "too_large", not the enum's bytes.
inline void PrintTo(ErrorCode code, std::ostream* os) {
  *os << ErrorCodeName(code);
}
}  // namespace ring

namespace ring::testing {

namespace fs = std::filesystem;

struct TarEntry {
  std::string name;
  mode_t type = AE_IFREG;
  std::string data;  // regular files
  std::string link;  // symlink target, or hard link target when `hardlink`
  bool hardlink = false;
  int perm = 0644;
};

// A tar.gz (pax_restricted, as PackDirectory writes) held in memory.
inline std::string CraftTarGz(const std::vector<TarEntry>& entries) {
  std::string out;
  struct archive* a = archive_write_new();
  EXPECT_EQ(archive_write_add_filter_gzip(a), ARCHIVE_OK);
  EXPECT_EQ(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
  EXPECT_EQ(archive_write_open(
                a, &out, nullptr,
                [](struct archive*, void* c, const void* b, size_t n) -> la_ssize_t {
                  static_cast<std::string*>(c)->append(static_cast<const char*>(b), n);
                  return static_cast<la_ssize_t>(n);
                },
                nullptr),
            ARCHIVE_OK);
  for (const auto& e : entries) {
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.name.c_str());
    archive_entry_set_filetype(entry, e.type);
    archive_entry_set_perm(entry, e.perm);
    if (e.type == AE_IFCHR || e.type == AE_IFBLK) archive_entry_set_rdev(entry, makedev(1, 3));
    if (e.hardlink)
      archive_entry_set_hardlink(entry, e.link.c_str());
    else if (!e.link.empty())
      archive_entry_set_symlink(entry, e.link.c_str());
    const bool has_data = e.type == AE_IFREG && !e.hardlink;
    archive_entry_set_size(entry, has_data ? static_cast<la_int64_t>(e.data.size()) : 0);
    EXPECT_EQ(archive_write_header(a, entry), ARCHIVE_OK) << e.name << ": " << archive_error_string(a);
    if (has_data && !e.data.empty()) {
      EXPECT_EQ(archive_write_data(a, e.data.data(), e.data.size()), static_cast<la_ssize_t>(e.data.size()));
    }
    archive_entry_free(entry);
  }
  EXPECT_EQ(archive_write_close(a), ARCHIVE_OK);
  archive_write_free(a);
  return out;
}

// A fresh folder under the system temp dir for each test, removed after it.
class ScratchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("ring-archive-" + std::to_string(::getpid()) + "-" +
                                         info->test_suite_name() + "-" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes `text` to src/<rel> (or base/<rel>), creating folders.
  void Write(const fs::path& rel, const std::string& text, fs::path base = {}) {
    const fs::path p = (base.empty() ? src() : base) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  static std::string Read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  fs::path src() const { return root_ / "src"; }

  fs::path root_;
};

}  // namespace ring::testing
