#pragma once
// The SVM's weights in the trial's checkpoints. The chief writes
// `weights.bin` (a small header, then every weight and bias as the
// little-endian bits of its float32, so a restore is exact on any host);
// on resume the chief verifies and reads it, and the weights reach the other
// ranks by the usual broadcast from rank 0, so only rank 0 needs the files.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ring/trial/distributed.h"
#include "ring/trial/trial.h"
#include "svm_model.h"

namespace svm {

inline constexpr const char* kWeightsFile = "weights.bin";

// Throw CheckpointError naming the file when it cannot be written or read,
// is malformed, or holds a model of other sizes than `m`.
void WriteWeights(const std::filesystem::path& file, const LinearSvm& m);
void ReadWeights(const std::filesystem::path& file, LinearSvm& m);

// Saves a checkpoint at `batches` with `metadata` (the chief writes it; other
// ranks return "" at once). Returns its uuid.
std::string SaveSvmCheckpoint(ring::trial::Context& ctx, int64_t batches, const LinearSvm& m,
                              const nlohmann::json& metadata);

// The checkpoint this run resumes from, nullopt when none. Rank 0 verifies
// it and reads the weights into `m`, then tells every rank whether that
// worked (one broadcast), so all ranks fail together (CheckpointError) or
// go on; the caller then broadcasts the weights. Every rank gets the
// registration (batches, metadata) from the master.
std::optional<ring::trial::CheckpointInfo> RestoreSvmCheckpoint(ring::trial::Context& ctx,
                                                                ring::trial::ProcessGroup& group,
                                                                LinearSvm& m);

}  // namespace svm
