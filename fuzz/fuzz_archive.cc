// Fuzzes the model-definition extractor (common/archive.h, UnpackArchive and
// ValidateArchive). The input is a tar, gzipped here so that mutations work
// on tar headers rather than on compressed bytes; an input that already
// starts with the gzip magic is used as it is (covering the gzip layer).
//
// Each input unpacks into a fresh folder, dest, at the bottom of a private
// sandbox (sandbox/a/b/c/dest), which is removed afterwards. Checked: the
// archive is refused with kInvalidArgument or kTooLarge, or it unpacks; the
// two passes agree (ValidateArchive accepts exactly what UnpackArchive
// unpacks); nothing appears in the sandbox outside dest; no link in dest
// points outside it; no file in dest shares its inode with one outside.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>

#include "common/archive.h"
#include "fuzz/fuzz_check.h"

namespace fs = std::filesystem;

namespace {

// Small limits keep each input's disk and memory use bounded.
const ring::UnpackLimits kLimits{64, 1 << 20};

fs::path g_sandbox;  // made once per process: <tmp>/ring-fuzz-archive-XXXXXX
uint64_t g_run = 0;

std::string Gzip(const std::string& raw) {
  z_stream z{};
  FUZZ_CHECK(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
  std::string out(deflateBound(&z, raw.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int r = deflate(&z, Z_FINISH);
  FUZZ_CHECK(r == Z_STREAM_END, "deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

bool Inside(const fs::path& path, const fs::path& root) {
  const auto rel = path.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

// Everything below `dir`, not following links, as path -> inode.
std::map<fs::path, ino_t> List(const fs::path& dir) {
  std::map<fs::path, ino_t> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    FUZZ_CHECK(::lstat(it->path().c_str(), &st) == 0, "lstat " + it->path().string());
    out[it->path()] = st.st_ino;
  }
  FUZZ_CHECK(!ec, "cannot list " + dir.string() + ": " + ec.message());
  return out;
}

void CheckConfined(const fs::path& dest) {
  const fs::path real_dest = fs::canonical(dest);
  std::map<ino_t, int> names_in_dest;
  for (const auto& [path, ino] : List(dest)) {
    ++names_in_dest[ino];
    std::error_code ec;
    const auto status = fs::symlink_status(path, ec);
    FUZZ_CHECK(!ec, path.string());
    if (fs::is_symlink(status)) {
      const fs::path target = fs::read_symlink(path, ec);
      FUZZ_CHECK(!ec && target.is_relative(), "link " + path.string() + " -> " + target.string());
      const fs::path resolved = fs::weakly_canonical(path.parent_path() / target, ec);
      FUZZ_CHECK(
          !ec && (resolved == real_dest || Inside(resolved, real_dest)),
          "link " + path.string() + " -> " + target.string() + " resolves outside: " + resolved.string());
    }
  }
  // A file with more names than dest holds has one somewhere else.
  for (const auto& [path, ino] : List(dest)) {
    struct stat st {};
    FUZZ_CHECK(::lstat(path.c_str(), &st) == 0, path.string());
    if (S_ISREG(st.st_mode))
      FUZZ_CHECK(st.st_nlink == static_cast<nlink_t>(names_in_dest[ino]),
                 path.string() + " is hard-linked outside the folder");
  }
  // The sandbox holds the folders down to dest and nothing else.
  for (const auto& [path, ino] : List(g_sandbox)) {
    if (path == dest || Inside(path, dest)) continue;
    FUZZ_CHECK(dest.string().rfind(path.string() + "/", 0) == 0,
               "created outside the folder: " + path.string());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::string tmpl = (fs::temp_directory_path() / "ring-fuzz-archive-XXXXXX").string();
  FUZZ_CHECK(::mkdtemp(tmpl.data()) != nullptr, "mkdtemp " + tmpl);
  g_sandbox = tmpl;
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(g_sandbox, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string raw(reinterpret_cast<const char*>(data), size);
  const bool gzipped = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const std::string tar_gz = gzipped ? raw : Gzip(raw);

  const ring::Status checked = ring::ValidateArchive(tar_gz, kLimits);
  const fs::path dest = g_sandbox / "a" / "b" / "c" / ("dest-" + std::to_string(g_run++));
  const ring::Status unpacked = ring::UnpackArchive(tar_gz, dest.string(), kLimits);
  FUZZ_CHECK(unpacked.code() == checked.code(),
             "validating says " + checked.ToString() + ", unpacking says " + unpacked.ToString());
  if (!unpacked.ok())
    FUZZ_CHECK(
        unpacked.code() == ring::ErrorCode::kInvalidArgument || unpacked.code() == ring::ErrorCode::kTooLarge,
        unpacked.ToString());
  if (fs::exists(dest)) CheckConfined(dest);
  std::error_code ec;
  fs::remove_all(g_sandbox / "a", ec);
  FUZZ_CHECK(!ec, "cannot remove " + dest.string() + ": " + ec.message());
  FUZZ_CHECK(fs::is_empty(g_sandbox), "the sandbox is not empty after removing the folder");
  return 0;
}
