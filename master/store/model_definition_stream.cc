#include "master/store/model_definition_stream.h"

#include <optional>
#include <string>

namespace ring {
namespace {

class ModelDefinitionStream final : public BodyStream {
 public:
  ModelDefinitionStream(Store& store, int64_t experiment_id, std::shared_ptr<void> slot)
      : store_(store), experiment_id_(experiment_id), slot_(std::move(slot)) {}

  Result<size_t> Read(char* out, size_t size) override {
    if (total_ && sent_ == *total_) return size_t{0};
    auto piece = store_.ReadModelDefinition(experiment_id_, sent_, out, size);
    if (!piece.ok()) return piece.status();
    if (total_ && piece->total != *total_)
      return Internal("the model definition of experiment " + std::to_string(experiment_id_) +
                      " changed while it was sent");
    total_ = piece->total;
    if (piece->bytes == 0 && sent_ < *total_) return Internal("the model definition ended early");
    sent_ += static_cast<int64_t>(piece->bytes);
    return piece->bytes;
  }

 private:
  Store& store_;
  const int64_t experiment_id_;
  std::shared_ptr<void> slot_;
  std::optional<int64_t> total_;
  int64_t sent_ = 0;
};

}  // namespace

std::unique_ptr<BodyStream> MakeModelDefinitionStream(Store& store, int64_t experiment_id,
                                                      std::shared_ptr<void> slot) {
  return std::make_unique<ModelDefinitionStream>(store, experiment_id, std::move(slot));
}

}  // namespace ring
