// ExperimentController: the rendezvous key-value store of each allocation,
// authorised by the allocation token. Authorisation takes mu_; the keys and
// values themselves are read and written under the store's own mutex.
#include "master/core/experiment_controller.h"

namespace ring {

Status ExperimentController::RendezvousSet(const std::string& allocation_id, const std::string& token,
                                           const std::string& key, std::string value) {
  if (Status s = AuthorizeAllocation(allocation_id, token); !s.ok()) return s;
  // An allocation that ends meanwhile is closed in the store: the call gets 409.
  return rendezvous_.Set(allocation_id, key, std::move(value));
}

Result<RendezvousStore::Lookup> ExperimentController::RendezvousGet(const std::string& allocation_id,
                                                                    const std::string& token,
                                                                    const std::string& key,
                                                                    RendezvousStore::Waker wake) {
  if (Status s = AuthorizeAllocation(allocation_id, token); !s.ok()) return s;
  return rendezvous_.Get(allocation_id, key, std::move(wake));
}

void ExperimentController::RendezvousCancelWait(const std::string& allocation_id,
                                                RendezvousStore::WaitId wait) {
  rendezvous_.CancelWait(allocation_id, wait);
}

Result<RendezvousStore::Check> ExperimentController::RendezvousCheck(const std::string& allocation_id,
                                                                     const std::string& token,
                                                                     const std::vector<std::string>& keys) {
  if (Status s = AuthorizeAllocation(allocation_id, token); !s.ok()) return s;
  return rendezvous_.CheckKeys(allocation_id, keys);
}

}  // namespace ring
