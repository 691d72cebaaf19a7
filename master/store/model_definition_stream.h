#pragma once
// An experiment's model definition sent as a stream (ApiResponse::stream):
// read out of the store one piece at a time, so a large model never sits
// whole in the master's memory and a slow reader holds one piece.
#include <cstdint>
#include <memory>

#include "common/body_stream.h"
#include "master/store/store.h"

namespace ring {

// `slot` is held as long as the stream lives (null: none). The stream ends
// with an error if the experiment goes, or its length changes, midway.
std::unique_ptr<BodyStream> MakeModelDefinitionStream(Store& store, int64_t experiment_id,
                                                      std::shared_ptr<void> slot);

}  // namespace ring
