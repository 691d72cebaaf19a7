#include "svm_checkpoint.h"

#include <bit>
#include <fstream>
#include <iterator>
#include <span>
#include <vector>

namespace svm {
namespace {

namespace fs = std::filesystem;
using ring::trial::CheckpointError;

constexpr uint32_t kMagic = 0x4d565352;  // "RSVM" read as little-endian bytes
constexpr uint32_t kVersion = 1;

void PutWord(std::vector<char>& out, uint32_t v) {
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xffu));
}

uint32_t GetWord(const std::vector<char>& in, size_t at) {
  uint32_t v = 0;
  for (int b = 0; b < 4; ++b) v |= static_cast<uint32_t>(static_cast<unsigned char>(in[at + b])) << (8 * b);
  return v;
}

}  // namespace

void WriteWeights(const fs::path& file, const LinearSvm& m) {
  std::vector<char> bytes;
  bytes.reserve(16 + 4 * (m.weights.size() + m.bias.size()));
  for (uint32_t v : {kMagic, kVersion, static_cast<uint32_t>(m.classes), static_cast<uint32_t>(m.features)})
    PutWord(bytes, v);
  for (float w : m.weights) PutWord(bytes, std::bit_cast<uint32_t>(w));
  for (float b : m.bias) PutWord(bytes, std::bit_cast<uint32_t>(b));
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw CheckpointError("cannot write " + file.string());
}

void ReadWeights(const fs::path& file, LinearSvm& m) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw CheckpointError("checkpoint file " + file.string() + " is missing or unreadable");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t want = 16 + 4 * (m.weights.size() + m.bias.size());
  if (bytes.size() < 16 || GetWord(bytes, 0) != kMagic || GetWord(bytes, 4) != kVersion)
    throw CheckpointError("checkpoint file " + file.string() + " is not an SVM weights file of version " +
                          std::to_string(kVersion));
  if (GetWord(bytes, 8) != m.classes || GetWord(bytes, 12) != m.features || bytes.size() != want)
    throw CheckpointError("checkpoint file " + file.string() + " holds a model of " +
                          std::to_string(GetWord(bytes, 8)) + " classes x " +
                          std::to_string(GetWord(bytes, 12)) + " features in " +
                          std::to_string(bytes.size()) + " bytes, not " + std::to_string(m.classes) + " x " +
                          std::to_string(m.features) + " in " + std::to_string(want));
  size_t at = 16;
  for (std::vector<float>* values : {&m.weights, &m.bias})
    for (float& v : *values) {
      v = std::bit_cast<float>(GetWord(bytes, at));
      at += 4;
    }
}

std::string SaveSvmCheckpoint(ring::trial::Context& ctx, int64_t batches, const LinearSvm& m,
                              const nlohmann::json& metadata) {
  if (!ctx.is_chief()) return "";
  return ctx.checkpoints().save(
      batches, [&](const fs::path& dir) { WriteWeights(dir / kWeightsFile, m); }, metadata);
}

std::optional<ring::trial::CheckpointInfo> RestoreSvmCheckpoint(ring::trial::Context& ctx,
                                                                ring::trial::ProcessGroup& group,
                                                                LinearSvm& m) {
  std::optional<ring::trial::CheckpointInfo> info = ctx.checkpoints().latest();
  if (!info) return std::nullopt;
  std::optional<CheckpointError> failure;
  int64_t ok[1] = {0};
  if (group.rank() == 0) {
    try {
      info = ctx.checkpoints().restore(*info);
      ReadWeights(info->path / kWeightsFile, m);
      ok[0] = 1;
    } catch (const CheckpointError& e) {
      failure = e;
    }
  }
  group.broadcast(std::span<int64_t>(ok), 0);
  if (failure) throw *failure;
  if (ok[0] != 1)
    throw CheckpointError("rank 0 could not restore checkpoint " + info->uuid + " (its log says why)");
  return info;
}

}  // namespace svm
