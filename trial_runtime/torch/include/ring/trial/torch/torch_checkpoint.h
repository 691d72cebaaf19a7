#pragma once
// Checkpoints of a torch trial: the module's state (model.pt) and the
// optimizer's (optimizer.pt) written with torch's own archives, through
// ctx.checkpoints() (written into a temporary directory, checksummed, moved
// into place and registered, so a checkpoint is complete or absent).
//
//   auto from = ring::trial::RestoreTorchCheckpoint(ctx, *group, *net, &optimizer);  // every rank
//   if (from) sampler.restore(ring::trial::SamplerState::FromJson(from->metadata["sampler"]));
//   ...
//   ring::trial::SaveTorchCheckpoint(ctx, batches, *net, &optimizer, {{"sampler",
//   sampler.state().to_json()}});
//
// In a data-parallel trial every rank holds the same state, so the chief
// (rank 0) alone writes it, and on resume the chief alone reads the files and
// sends the state to the other ranks through the process group: the other
// ranks need no access to the checkpoint storage. torch is only forward
// declared here.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ring/trial/checkpoints.h"
#include "ring/trial/checkpoints_sharded.h"
#include "ring/trial/context.h"
#include "ring/trial/distributed.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace ring::trial {

inline constexpr const char* kTorchModelFile = "model.pt";
inline constexpr const char* kTorchOptimizerFile = "optimizer.pt";

// Writes `module` to dir/model.pt and, when given, `optimizer` to
// dir/optimizer.pt. Throws CheckpointError naming the file.
void WriteTorchState(const std::filesystem::path& dir, const torch::nn::Module& module,
                     const torch::optim::Optimizer* optimizer);
// Reads them back into a module and optimizer of the same architecture.
// Throws CheckpointError naming the file that is missing or does not match.
void ReadTorchState(const std::filesystem::path& dir, torch::nn::Module& module,
                    torch::optim::Optimizer* optimizer);

// The chief saves a checkpoint at `batches` holding model.pt, optimizer.pt
// (when given), whatever `extra` writes into the directory, and `metadata`;
// returns its uuid. Other ranks write nothing and return "". Throws what
// Checkpoints::save throws.
std::string SaveTorchCheckpoint(Context& ctx, int64_t batches, const torch::nn::Module& module,
                                const torch::optim::Optimizer* optimizer,
                                const nlohmann::json& metadata = nlohmann::json::object(),
                                const Checkpoints::Writer& extra = {});

// Call on every rank at start. When the trial resumes, every rank gets the
// checkpoint's record (batches, metadata; this also restores the validation
// and checkpoint clocks of ctx), the chief verifies and reads its files, and
// the module's and optimizer's state go from the chief to every rank.
// nullopt on every rank when the trial starts afresh. Throws CheckpointError
// on every rank when the chief could not restore it (the chief's message
// names the file), CollectiveError from the group.
std::optional<CheckpointInfo> RestoreTorchCheckpoint(Context& ctx, ProcessGroup& group,
                                                     torch::nn::Module& module,
                                                     torch::optim::Optimizer* optimizer,
                                                     Timeout timeout = kDefaultCollectiveTimeout);

// Sharded: every rank saves its own module (the part of a model split
// across the ranks) and optimizer into its part of one checkpoint
// (ShardedCheckpoints: rank-<r>/model.pt, rank-<r>/optimizer.pt); returns
// the uuid on every rank once it is registered. Call on every rank.
std::string SaveShardedTorchCheckpoint(ShardedCheckpoints& sharded, int64_t batches,
                                       const torch::nn::Module& module,
                                       const torch::optim::Optimizer* optimizer,
                                       const nlohmann::json& metadata = nlohmann::json::object(),
                                       const Checkpoints::Writer& extra = {});
// Every rank verifies and reads its own part into its module and optimizer.
// nullopt when starting afresh; CheckpointError when the checkpoint was
// written by another number of ranks (see ShardedCheckpoints::restore).
std::optional<CheckpointInfo> RestoreShardedTorchCheckpoint(ShardedCheckpoints& sharded,
                                                            torch::nn::Module& module,
                                                            torch::optim::Optimizer* optimizer);

// The root's module (parameters and buffers) and optimizer state to every
// rank, serialized with torch's archives and broadcast as bytes.
void BroadcastTorchState(ProcessGroup& group, torch::nn::Module& module, torch::optim::Optimizer* optimizer,
                         int root = 0, Timeout timeout = kDefaultCollectiveTimeout);

}  // namespace ring::trial
