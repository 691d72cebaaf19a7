#include "ring/trial/torch/torch_checkpoint.h"

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstring>
#include <span>
#include <sstream>
#include <vector>

namespace ring::trial {
namespace {

namespace fs = std::filesystem;

std::string Serialize(const torch::nn::Module& module) {
  torch::serialize::OutputArchive archive;
  module.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

std::string Serialize(const torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

// Shapes of every parameter and buffer, by name.
std::vector<std::pair<std::string, std::vector<int64_t>>> Shapes(const torch::nn::Module& module) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (const auto& p : module.named_parameters()) shapes.emplace_back(p.key(), p.value().sizes().vec());
  for (const auto& b : module.named_buffers()) shapes.emplace_back(b.key(), b.value().sizes().vec());
  return shapes;
}

// Module::load replaces each tensor with the stored one, whatever its shape:
// a state of another architecture must not slip through.
void LoadChecked(torch::serialize::InputArchive& archive, torch::nn::Module& module,
                 const std::string& what) {
  const auto before = Shapes(module);
  module.load(archive);
  const auto after = Shapes(module);
  for (size_t i = 0; i < before.size() && i < after.size(); ++i)
    if (before[i] != after[i])
      throw CheckpointError(what + ": " + before[i].first + " has shape " +
                            c10::str(c10::IntArrayRef(after[i].second)) + ", this model's is " +
                            c10::str(c10::IntArrayRef(before[i].second)));
}

void Deserialize(const std::string& bytes, torch::nn::Module& module) {
  torch::serialize::InputArchive archive;
  archive.load_from(bytes.data(), bytes.size());
  LoadChecked(archive, module, "the model state from rank 0");
}

void Deserialize(const std::string& bytes, torch::optim::Optimizer& optimizer) {
  torch::serialize::InputArchive archive;
  archive.load_from(bytes.data(), bytes.size());
  optimizer.load(archive);
}

// Bytes travel as int64 words (a broadcast copies them unchanged).
void BroadcastBytes(ProcessGroup& group, std::string& bytes, int64_t size, int root, Timeout timeout) {
  std::vector<int64_t> words(static_cast<size_t>((size + 7) / 8));
  if (group.rank() == root) std::memcpy(words.data(), bytes.data(), bytes.size());
  if (!words.empty()) group.broadcast(std::span<int64_t>(words), root, timeout);
  if (group.rank() != root)
    bytes.assign(reinterpret_cast<const char*>(words.data()), static_cast<size_t>(size));
}

// What the root says about the checkpoint before sending the state.
struct RootStatus {
  int64_t ok = 0;
  int64_t model_bytes = 0;
  int64_t optimizer_bytes = 0;
};

void SendState(ProcessGroup& group, int root, Timeout timeout, RootStatus status, std::string& model,
               std::string& optimizer_bytes, torch::nn::Module& module, torch::optim::Optimizer* optimizer) {
  BroadcastBytes(group, model, status.model_bytes, root, timeout);
  BroadcastBytes(group, optimizer_bytes, status.optimizer_bytes, root, timeout);
  if (group.rank() == root) return;
  Deserialize(model, module);
  if (optimizer && status.optimizer_bytes > 0) Deserialize(optimizer_bytes, *optimizer);
}

}  // namespace

void WriteTorchState(const fs::path& dir, const torch::nn::Module& module,
                     const torch::optim::Optimizer* optimizer) {
  auto write = [&](const fs::path& file, auto&& save) {
    try {
      torch::serialize::OutputArchive archive;
      save(archive);
      archive.save_to(file.string());
    } catch (const c10::Error& e) {
      throw CheckpointError("cannot write " + file.string() + ": " + e.what_without_backtrace());
    }
  };
  write(dir / kTorchModelFile, [&](torch::serialize::OutputArchive& a) { module.save(a); });
  if (optimizer)
    write(dir / kTorchOptimizerFile, [&](torch::serialize::OutputArchive& a) { optimizer->save(a); });
}

void ReadTorchState(const fs::path& dir, torch::nn::Module& module, torch::optim::Optimizer* optimizer) {
  auto read = [&](const fs::path& file, auto&& load) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
      throw CheckpointError("checkpoint file " + file.string() + " is missing");
    try {
      torch::serialize::InputArchive archive;
      archive.load_from(file.string());
      load(archive);
    } catch (const c10::Error& e) {
      throw CheckpointError("checkpoint file " + file.string() +
                            " cannot be loaded into this model: " + e.what_without_backtrace());
    }
  };
  read(dir / kTorchModelFile,
       [&](torch::serialize::InputArchive& a) { LoadChecked(a, module, (dir / kTorchModelFile).string()); });
  if (optimizer)
    read(dir / kTorchOptimizerFile, [&](torch::serialize::InputArchive& a) { optimizer->load(a); });
}

std::string SaveTorchCheckpoint(Context& ctx, int64_t batches, const torch::nn::Module& module,
                                const torch::optim::Optimizer* optimizer, const nlohmann::json& metadata,
                                const Checkpoints::Writer& extra) {
  if (!ctx.is_chief()) return "";
  return ctx.checkpoints().save(
      batches,
      [&](const fs::path& dir) {
        WriteTorchState(dir, module, optimizer);
        if (extra) extra(dir);
      },
      metadata);
}

std::string SaveShardedTorchCheckpoint(ShardedCheckpoints& sharded, int64_t batches,
                                       const torch::nn::Module& module,
                                       const torch::optim::Optimizer* optimizer,
                                       const nlohmann::json& metadata, const Checkpoints::Writer& extra) {
  return sharded.save(
      batches,
      [&](const fs::path& dir) {
        WriteTorchState(dir, module, optimizer);
        if (extra) extra(dir);
      },
      metadata);
}

std::optional<CheckpointInfo> RestoreShardedTorchCheckpoint(ShardedCheckpoints& sharded,
                                                            torch::nn::Module& module,
                                                            torch::optim::Optimizer* optimizer) {
  std::optional<CheckpointInfo> mine = sharded.latest_verified();
  if (mine) ReadTorchState(mine->path, module, optimizer);
  return mine;
}

std::optional<CheckpointInfo> RestoreTorchCheckpoint(Context& ctx, ProcessGroup& group,
                                                     torch::nn::Module& module,
                                                     torch::optim::Optimizer* optimizer, Timeout timeout) {
  constexpr int kRoot = 0;
  std::optional<CheckpointInfo> info = ctx.checkpoints().latest();
  if (!info) return std::nullopt;
  RootStatus status;
  std::string model_bytes, optimizer_bytes;
  std::optional<CheckpointError> failure;
  if (group.rank() == kRoot) {
    try {
      info = ctx.checkpoints().restore(*info);
      ReadTorchState(info->path, module, optimizer);
      if (group.size() > 1) {
        model_bytes = Serialize(module);
        if (optimizer) optimizer_bytes = Serialize(*optimizer);
      }
      status = {1, static_cast<int64_t>(model_bytes.size()), static_cast<int64_t>(optimizer_bytes.size())};
    } catch (const CheckpointError& e) {
      failure = e;
    }
  }
  if (group.size() > 1) {
    int64_t words[3] = {status.ok, status.model_bytes, status.optimizer_bytes};
    group.broadcast(std::span<int64_t>(words), kRoot, timeout);
    status = {words[0], words[1], words[2]};
  }
  if (failure) throw *failure;
  if (!status.ok)
    throw CheckpointError("rank 0 could not restore checkpoint " + info->uuid + " (its log says why)");
  if (group.size() > 1)
    SendState(group, kRoot, timeout, status, model_bytes, optimizer_bytes, module, optimizer);
  return info;
}

void BroadcastTorchState(ProcessGroup& group, torch::nn::Module& module, torch::optim::Optimizer* optimizer,
                         int root, Timeout timeout) {
  if (root < 0 || root >= group.size())
    throw ConfigError("BroadcastTorchState: root " + std::to_string(root) + " is not a rank of a group of " +
                      std::to_string(group.size()));
  if (group.size() == 1) return;
  RootStatus status{1, 0, 0};
  std::string model_bytes, optimizer_bytes;
  if (group.rank() == root) {
    model_bytes = Serialize(module);
    if (optimizer) optimizer_bytes = Serialize(*optimizer);
    status = {1, static_cast<int64_t>(model_bytes.size()), static_cast<int64_t>(optimizer_bytes.size())};
  }
  int64_t words[3] = {status.ok, status.model_bytes, status.optimizer_bytes};
  group.broadcast(std::span<int64_t>(words), root, timeout);
  status = {words[0], words[1], words[2]};
  SendState(group, root, timeout, status, model_bytes, optimizer_bytes, module, optimizer);
}

}  // namespace ring::trial
