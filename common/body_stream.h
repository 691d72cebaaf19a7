#pragma once
// An answer body produced piece by piece (a checkpoint's tar.gz, a database
// backup), so that the master never holds a whole large answer in memory:
// the HTTP layer asks for the next piece only once the previous one is
// written to the client, so a slow reader holds one buffer.
#include <cstddef>

#include "common/status.h"

namespace ring {

class BodyStream {
 public:
  virtual ~BodyStream() = default;
  // Fills up to `size` bytes of `out`; returns how many, 0 at the end. An
  // error cuts the answer short (the connection closes without the final
  // chunk, so the client sees an incomplete answer, never a complete wrong one).
  virtual Result<size_t> Read(char* out, size_t size) = 0;
};

}  // namespace ring
