#pragma once
// Umbrella header of the Ringmaster trial runtime.
#include "ring/trial/checkpoint_storage.h"   // IWYU pragma: export
#include "ring/trial/checkpoints.h"          // IWYU pragma: export
#include "ring/trial/checkpoints_sharded.h"  // IWYU pragma: export
#include "ring/trial/context.h"              // IWYU pragma: export
#include "ring/trial/errors.h"               // IWYU pragma: export
#include "ring/trial/metrics_reporter.h"     // IWYU pragma: export
#include "ring/trial/metrics_sink.h"         // IWYU pragma: export
#include "ring/trial/preemption.h"           // IWYU pragma: export
#include "ring/trial/searcher.h"             // IWYU pragma: export
