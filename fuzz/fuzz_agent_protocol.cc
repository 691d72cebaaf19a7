// Fuzzes the agent channel's message decoder (common/agent_protocol.h): one
// WebSocket text frame in, a message or an error out. Errors must be
// kInvalidArgument; a decoded message must encode to a frame that decodes
// again and encodes to the same text (the master and the agent agree on
// every message either of them accepts).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/agent_protocol.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string frame(reinterpret_cast<const char*>(data), size);
  auto message = ring::proto::Decode(frame);
  if (!message.ok()) {
    FUZZ_CHECK(message.status().code() == ring::ErrorCode::kInvalidArgument, message.status().ToString());
    return 0;
  }
  const std::string encoded = ring::proto::Encode(*message);
  auto again = ring::proto::Decode(encoded);
  FUZZ_CHECK(again.ok(),
             "an encoded message does not decode: " + again.status().ToString() + "\n  " + encoded);
  FUZZ_CHECK(again->index() == message->index(), encoded);
  const std::string reencoded = ring::proto::Encode(*again);
  FUZZ_CHECK(reencoded == encoded, "encoding is not stable:\n  " + encoded + "\n  " + reencoded);
  return 0;
}
