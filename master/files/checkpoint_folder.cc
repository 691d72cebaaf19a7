#include "master/files/checkpoint_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <openssl/evp.h>

namespace ring {
namespace {

Status InFolder(const std::string& uuid, const Status& s) {
  return Status(s.code(), "checkpoint " + uuid + ": " + s.message());
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
}
Sha256::~Sha256() {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
}
void Sha256::Update(const char* data, size_t size) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, size);
}
std::string Sha256::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), digest, &n);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

Result<UniqueFd> OpenCheckpointParent(const CheckpointRoots& roots, const CheckpointStorage& storage) {
  auto where = roots.Locate(storage);
  if (!where.ok()) return where.status();
  return OpenDirBelow(where->root, where->rel);
}

Result<UniqueFd> OpenCheckpointFolder(const CheckpointRoots& roots, const CheckpointStorage& storage,
                                      const std::string& uuid) {
  if (!IsCheckpointUuid(uuid)) return InvalidArgument("\"" + uuid + "\" is not a checkpoint uuid");
  auto parent = OpenCheckpointParent(roots, storage);
  if (!parent.ok()) return InFolder(uuid, parent.status());
  auto folder = OpenDirAt(parent->get(), uuid);
  if (!folder.ok()) return InFolder(uuid, folder.status());
  return folder;
}

Status EnsureCheckpointParent(const CheckpointRoots& roots, const CheckpointStorage& storage) {
  auto where = roots.Locate(storage);
  if (!where.ok()) return where.status();
  if (::mkdir(where->root.c_str(), 0700) == 0) {
    if (::chmod(where->root.c_str(), kSharedCheckpointFolderMode) != 0)
      return Unavailable("cannot set the mode of " + where->root + ": " + std::strerror(errno));
  } else if (errno != EEXIST) {
    return Unavailable("cannot create " + where->root + ": " + std::strerror(errno));
  }
  auto current = OpenDirBelow(where->root, "");
  if (!current.ok()) return current.status();
  std::string rest = where->rel;
  std::string walked = where->root;
  while (!rest.empty()) {
    const size_t slash = rest.find('/');
    const std::string part = rest.substr(0, slash);
    rest = slash == std::string::npos ? "" : rest.substr(slash + 1);
    walked += "/" + part;
    if (::mkdirat(current->get(), part.c_str(), 0700) == 0) {
      UniqueFd made(::openat(current->get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!made.valid() || ::fchmod(made.get(), kSharedCheckpointFolderMode) != 0)
        return Unavailable("cannot set the mode of " + walked + ": " + std::strerror(errno));
    } else if (errno != EEXIST) {
      return Unavailable("cannot create " + walked + ": " + std::strerror(errno));
    }
    auto next = OpenDirAt(current->get(), part);
    if (!next.ok()) return Status(next.status().code(), walked + ": " + next.status().message());
    current = std::move(next).value();
  }
  return Status::Ok();
}

namespace {

// Each file opened without links and checked for its size, then, with
// `hash`, read whole for its SHA-256.
Status CheckFiles(int folder_fd, const std::vector<CheckpointFile>& files, bool hash) {
  std::string buffer(hash ? 1 << 16 : 0, '\0');
  for (const auto& f : files) {
    struct stat st {};
    auto fd = OpenRegularFileAt(folder_fd, f.path, &st);
    if (!fd.ok()) return fd.status();
    if (st.st_size != f.size)
      return InvalidArgument(f.path + " has " + std::to_string(st.st_size) + " bytes, registered with " +
                             std::to_string(f.size));
    if (!hash) continue;
    Sha256 sha;
    for (;;) {
      const ssize_t n = ::read(fd->get(), buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Unavailable("cannot read " + f.path + ": " + std::strerror(errno));
      if (n == 0) break;
      sha.Update(buffer.data(), static_cast<size_t>(n));
    }
    if (sha.HexDigest() != f.sha256)
      return InvalidArgument(f.path +
                             " does not have its registered SHA-256 (changed since it was registered)");
  }
  return Status::Ok();
}

}  // namespace

Status CheckRegisteredFiles(int folder_fd, const std::vector<CheckpointFile>& files) {
  return CheckFiles(folder_fd, files, false);
}

Status VerifyRegisteredFiles(int folder_fd, const std::vector<CheckpointFile>& files) {
  return CheckFiles(folder_fd, files, true);
}

Status RemoveCheckpointFolder(const CheckpointRoots& roots, const CheckpointStorage& storage,
                              const std::string& uuid) {
  if (!IsCheckpointUuid(uuid)) return InvalidArgument("\"" + uuid + "\" is not a checkpoint uuid");
  auto parent = OpenCheckpointParent(roots, storage);
  if (!parent.ok()) {
    if (parent.status().code() == ErrorCode::kNotFound) return Status::Ok();  // already gone
    return InFolder(uuid, parent.status());
  }
  if (Status s = RemoveTreeAt(parent->get(), uuid); !s.ok()) return InFolder(uuid, s);
  return Status::Ok();
}

}  // namespace ring
