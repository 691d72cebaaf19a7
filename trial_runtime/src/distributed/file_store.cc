// FileStore: one file per key in a directory that every rank sees (one host,
// or a shared file system). A value is written to a temporary file and
// renamed over the key's file, so a reader sees either nothing or a whole
// value; get() polls for the file with short sleeps.
#include <unistd.h>

#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <system_error>
#include <thread>

#include "distributed/store_keys.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;

constexpr char kHex[] = "0123456789abcdef";
// Longer encoded names are replaced by their hash (file names stop at 255 bytes).
constexpr size_t kMaxEncodedName = 200;

std::string Sha256Hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw RendezvousError("cannot hash the rendezvous key " + text + " for its file name");
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

// Letters, digits, '.' and '-' stay; '/', ':' and '_' become "_XX" (hex).
// The "k-" in front keeps "." and ".." from naming directories.
std::string FileName(const std::string& key) {
  std::string name = "k-";
  for (char c : key) {
    if (c == '/' || c == ':' || c == '_') {
      name += '_';
      name += kHex[static_cast<unsigned char>(c) >> 4];
      name += kHex[static_cast<unsigned char>(c) & 15];
    } else {
      name += c;
    }
  }
  if (name.size() > kMaxEncodedName) return "h-" + Sha256Hex(key);
  return name;
}

std::string UniqueSuffix() {
  static const uint64_t process_nonce =
      std::random_device{}() * 0x9E3779B97F4A7C15ull ^ std::random_device{}();
  static std::atomic<uint64_t> counter{0};
  return std::to_string(::getpid()) + "-" + std::to_string(process_nonce) + "-" + std::to_string(++counter);
}

class DirectoryStore final : public KeyValueStore {
 public:
  explicit DirectoryStore(fs::path dir) : dir_(std::move(dir)) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec || !fs::is_directory(dir_))
      throw RendezvousError("cannot use " + dir_.string() +
                            " as the rendezvous directory: " + (ec ? ec.message() : "not a directory"));
  }

  void set(const std::string& key, const Bytes& value) override {
    detail::CheckKey(key);
    detail::CheckValue(key, value);
    const fs::path tmp = dir_ / (".tmp-" + UniqueSuffix());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(value.data()), static_cast<std::streamsize>(value.size()));
      out.close();
      if (!out) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw RendezvousError("cannot write rendezvous key " + key + " to " + tmp.string());
      }
    }
    std::error_code ec;
    fs::rename(tmp, dir_ / FileName(key), ec);
    if (ec) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw RendezvousError("cannot store rendezvous key " + key + " in " + dir_.string() + ": " +
                            ec.message());
    }
  }

  Bytes get(const std::string& key, std::chrono::milliseconds timeout) override {
    detail::CheckKey(key);
    const fs::path path = dir_ / FileName(key);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::milliseconds(1);
    for (;;) {
      std::ifstream in(path, std::ios::binary);
      if (in) return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline)
        throw RendezvousError("rendezvous key " + key + " was not set within " +
                              detail::DescribeTimeout(timeout) + " (looked for " + path.string() + ")");
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
      pause = std::min(pause * 2, std::chrono::milliseconds(20));
    }
  }

  bool check(const std::vector<std::string>& keys) override {
    for (const auto& key : keys) detail::CheckKey(key);
    std::error_code ec;
    for (const auto& key : keys)
      if (!fs::exists(dir_ / FileName(key), ec)) return false;
    return true;
  }

 private:
  fs::path dir_;
};

}  // namespace

std::shared_ptr<KeyValueStore> FileStore(const std::string& dir) {
  if (dir.empty()) throw RendezvousError("FileStore needs a directory");
  return std::make_shared<DirectoryStore>(dir);
}

}  // namespace ring::trial
