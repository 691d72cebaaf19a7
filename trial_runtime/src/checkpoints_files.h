#pragma once
// Steps on a checkpoint's files shared by the ways of writing one
// (checkpoints.cc, checkpoints_forked.cc, checkpoints_sharded.cc). Any thread.
#include <filesystem>
#include <vector>

#include "ring/trial/checkpoints.h"

namespace ring::trial::detail {

// Asks the kernel to start writing every file of `dir` to disk now, without
// waiting. Best effort.
void StartWriteback(const std::filesystem::path& dir);

// Every regular file the writer left in `dir`, sorted, with size and
// SHA-256: hashed here, or, when `listed` is not empty, checked to be
// exactly those files with those sizes (their digests taken as listed).
// Throws CheckpointError naming what is wrong.
std::vector<CheckpointFile> ListFiles(const std::filesystem::path& dir,
                                      std::vector<CheckpointFile> listed = {});

// fsyncs every file and folder under `dir`, and `dir` itself.
void SyncTree(const std::filesystem::path& dir);

}  // namespace ring::trial::detail
