#pragma once
// Deleting an experiment (DELETE /api/v1/experiments/{id}) once the store
// marked it deleting: every checkpoint folder of its trials is removed
// (below an allowed root, never following a link), then every row of it
// in one transaction. A folder that cannot be removed leaves the
// experiment marked and its rows in place, to be tried again (at the
// master's next start, or the next DELETE); a master stopped halfway
// finishes the deletion after its restart. Runs on a worker thread, never
// the network's or the lifecycle's.
#include <cstdint>

#include "common/status.h"
#include "master/files/checkpoint_roots.h"
#include "master/store/store.h"

namespace ring {

// Ok unless a checkpoint of experiment `id` is a model version; then
// kConflict naming each ("checkpoint X is version 2 of model foo") and how
// to let it go.
Status CheckNoModelVersions(Store& store, int64_t id);

// Removes experiment `id`'s checkpoint folders, then its rows. kNotFound
// when it is gone already; kConflict, before any folder goes, while one
// of its checkpoints is a model version (CheckNoModelVersions).
Status DeleteExperimentNow(Store& store, const CheckpointRoots& roots, int64_t id);

}  // namespace ring
