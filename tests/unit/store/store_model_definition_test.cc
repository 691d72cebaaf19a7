// An experiment's model definition: stored byte for byte, and read back in
// pieces for streaming. Both Store implementations.
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

template <typename Holder>
class StoreModelDefinitionTest : public ::testing::Test {
 protected:
  Holder holder_;
  std::unique_ptr<Store>& store_ = holder_.store;
};

TYPED_TEST_SUITE(StoreModelDefinitionTest, testing::BothStores);

TYPED_TEST(StoreModelDefinitionTest, ModelDefinitionRoundTripsBinaryData) {
  std::string model;
  for (int i = 0; i < 256 * 64; ++i) model.push_back(static_cast<char>(i % 256));
  model += std::string("\0\0tail\0", 7);
  ExperimentRecord e;
  e.config_yaml = "name: x\n";
  auto id = this->store_->CreateExperiment(e, model);
  ASSERT_TRUE(id.ok());
  auto got = this->store_->GetModelDefinition(*id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), model.size());
  EXPECT_TRUE(*got == model);

  auto empty_id = this->store_->CreateExperiment(e, "");
  ASSERT_TRUE(empty_id.ok());
  auto empty = this->store_->GetModelDefinition(*empty_id);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
}

TYPED_TEST(StoreModelDefinitionTest, ModelDefinitionIsReadInPieces) {
  std::string model;
  for (int i = 0; i < 100000; ++i) model.push_back(static_cast<char>((i * 7) % 251));
  ExperimentRecord e;
  e.config_yaml = "name: x\n";
  auto id = this->store_->CreateExperiment(e, model);
  ASSERT_TRUE(id.ok());
  std::string read;
  char buffer[4096];
  for (;;) {
    auto piece =
        this->store_->ReadModelDefinition(*id, static_cast<int64_t>(read.size()), buffer, sizeof buffer);
    ASSERT_TRUE(piece.ok()) << piece.status().ToString();
    EXPECT_EQ(piece->total, static_cast<int64_t>(model.size()));
    if (piece->bytes == 0) break;
    ASSERT_LE(piece->bytes, sizeof buffer);
    read.append(buffer, piece->bytes);
  }
  EXPECT_TRUE(read == model);

  auto past = this->store_->ReadModelDefinition(*id, static_cast<int64_t>(model.size()) + 1, buffer, 1);
  EXPECT_EQ(past.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store_->ReadModelDefinition(*id + 100, 0, buffer, 1).status().code(), ErrorCode::kNotFound);

  auto empty_id = this->store_->CreateExperiment(e, "");
  ASSERT_TRUE(empty_id.ok());
  auto empty = this->store_->ReadModelDefinition(*empty_id, 0, buffer, sizeof buffer);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->bytes, 0u);
  EXPECT_EQ(empty->total, 0);
}

}  // namespace
}  // namespace ring
