#pragma once
// Umbrella header of ringtrial_torch: libtorch glue for data-parallel trials
// (link ringtrial_torch; built when CMake finds Torch).
#include "ring/trial/torch/distributed_module.h"  // IWYU pragma: export
#include "ring/trial/torch/torch_checkpoint.h"    // IWYU pragma: export
