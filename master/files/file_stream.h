#pragma once
// An open file sent as a stream (ApiResponse::stream), 64 KiB at a time:
// database backups. The file may already be unlinked; it is closed (and so
// gone) when the stream goes.
#include <cstdint>
#include <memory>

#include "common/body_stream.h"
#include "master/files/nofollow.h"

namespace ring {

// Streams `size` bytes of `fd` from its start; fewer is an error. `slot` is
// held as long as the stream lives.
std::unique_ptr<BodyStream> MakeFileStream(UniqueFd fd, uint64_t size, std::shared_ptr<void> slot);

}  // namespace ring
