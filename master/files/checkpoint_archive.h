#pragma once
// A checkpoint's download: a tar.gz of exactly the files it registered (and
// its manifest, rebuilt from the record), produced piece by piece as the
// client reads. Each file is opened below the checkpoint's folder without
// following links, must have one link and its registered size, and is hashed
// as it is read: a file whose SHA-256 differs from the registered one cuts
// the answer short. Runs on the connection's io thread, 64 KiB at a time.
#include <memory>
#include <string>

#include "common/body_stream.h"
#include "master/files/nofollow.h"
#include "master/store/store.h"

namespace ring {

// The stream of checkpoint `c`, whose folder `folder` is already open (and
// checked with VerifyRegisteredFiles). `slot` is held as long as the stream
// lives (the limit of large answers at once).
std::unique_ptr<BodyStream> MakeCheckpointArchiveStream(CheckpointRecord c, UniqueFd folder,
                                                        std::shared_ptr<void> slot);

// The manifest a trial runtime writes beside the files (".ring-checkpoint.json"),
// rebuilt from the record so that a download resumes with `--resume` alone.
std::string CheckpointManifestText(const CheckpointRecord& c);

}  // namespace ring
