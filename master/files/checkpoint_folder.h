#pragma once
// One checkpoint's folder, <allowed root>/<rel>/<uuid>, as the master reads,
// checks and deletes it: every step below the allowed root is opened
// without following links (nofollow.h), and only the files the checkpoint
// registered count. Blocking file system work: call it off the io threads
// when it reads file contents or deletes.
#include <string>
#include <vector>

#include "common/status.h"
#include "master/files/checkpoint_roots.h"
#include "master/files/nofollow.h"
#include "master/store/store.h"

namespace ring {

// The mode of folders the master creates for checkpoints (the storage root's
// levels below an allowed root): owner and group rwx, others may create
// entries and reach them by name but not list them; sticky (nobody removes
// another's folder), setgid (new entries get the folder's group, the
// master's). docs/operations.md, "Checkpoint folders".
inline constexpr unsigned kSharedCheckpointFolderMode = 03773;

// Opens the folder that holds the storage's checkpoints.
Result<UniqueFd> OpenCheckpointParent(const CheckpointRoots& roots, const CheckpointStorage& storage);
// Opens the folder of checkpoint `uuid` (a real folder, not a link).
Result<UniqueFd> OpenCheckpointFolder(const CheckpointRoots& roots, const CheckpointStorage& storage,
                                      const std::string& uuid);
// Creates the storage's folder when missing: each missing level below its
// allowed root, with kSharedCheckpointFolderMode whatever the umask.
Status EnsureCheckpointParent(const CheckpointRoots& roots, const CheckpointStorage& storage);
// Each registered file is a regular file with one link and its registered
// size; the message names the first that is not.
Status CheckRegisteredFiles(int folder_fd, const std::vector<CheckpointFile>& files);
// The same, and each file's SHA-256 as registered (reads every byte).
Status VerifyRegisteredFiles(int folder_fd, const std::vector<CheckpointFile>& files);
// Deletes the checkpoint's folder: its entry in the parent opened without
// links; a folder replaced by a link loses the link only.
Status RemoveCheckpointFolder(const CheckpointRoots& roots, const CheckpointStorage& storage,
                              const std::string& uuid);

// Incremental SHA-256, hex out.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(const char* data, size_t size);
  std::string HexDigest();

 private:
  void* ctx_;
};

}  // namespace ring
