#pragma once
// The digits example's network and its tensors. Includes torch: only the
// example's torch translation units include this header.
#include <torch/nn/functional/dropout.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdint>

#include "digits_data.h"

namespace digits {

// A small CNN for 8x8 images: conv 1->16 3x3, relu, conv 16->32 3x3, relu,
// 2x2 max pool, dropout, linear 512->10 (logits).
class NetImpl : public torch::nn::Module {
 public:
  explicit NetImpl(double dropout);
  torch::Tensor forward(const torch::Tensor& images);  // [N, 1, 8, 8] -> [N, 10]

 private:
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::Linear fc_{nullptr};
  double dropout_;
};
TORCH_MODULE(Net);

// [N, 1, 8, 8] float32 intensities scaled to 0..1.
torch::Tensor Images(const Dataset& data);
// [N] int64 digits.
torch::Tensor Labels(const Dataset& data);

// FNV-1a over the bytes of every parameter, in registration order: equal
// exactly when the parameters are (for checking bit-exact resumption).
uint64_t ParameterDigest(const torch::nn::Module& module);

}  // namespace digits
