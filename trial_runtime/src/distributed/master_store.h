#pragma once
// The master's rendezvous store of one allocation, over the trial API (its
// token, its retries of transport errors and 5xx answers).
#include <memory>

#include "ring/trial/kv_store.h"

namespace ring::trial::detail {

class TrialApi;

std::shared_ptr<KeyValueStore> MasterStoreOver(std::shared_ptr<TrialApi> api);

}  // namespace ring::trial::detail
