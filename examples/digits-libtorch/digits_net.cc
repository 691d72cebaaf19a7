#include "digits_net.h"

namespace digits {

NetImpl::NetImpl(double dropout) : dropout_(dropout) {
  conv1_ = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 3).padding(1)));
  conv2_ = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).padding(1)));
  fc_ = register_module("fc", torch::nn::Linear(32 * 4 * 4, static_cast<int64_t>(kClasses)));
}

torch::Tensor NetImpl::forward(const torch::Tensor& images) {
  namespace F = torch::nn::functional;
  torch::Tensor x = torch::relu(conv1_->forward(images));
  x = torch::relu(conv2_->forward(x));
  x = F::max_pool2d(x, F::MaxPool2dFuncOptions(2));
  x = x.flatten(1);
  if (dropout_ > 0) x = F::dropout(x, F::DropoutFuncOptions().p(dropout_).training(is_training()));
  return fc_->forward(x);
}

torch::Tensor Images(const Dataset& data) {
  const auto n = static_cast<int64_t>(data.size());
  torch::Tensor bytes =
      torch::from_blob(const_cast<uint8_t*>(data.pixels.data()), {n, 1, 8, 8}, torch::kUInt8);
  return bytes.to(torch::kFloat32).div_(static_cast<double>(kMaxIntensity));
}

torch::Tensor Labels(const Dataset& data) {
  const auto n = static_cast<int64_t>(data.size());
  return torch::from_blob(const_cast<uint8_t*>(data.labels.data()), {n}, torch::kUInt8).to(torch::kInt64);
}

uint64_t ParameterDigest(const torch::nn::Module& module) {
  uint64_t h = 1469598103934665603ull;
  for (const auto& p : module.parameters()) {
    const torch::Tensor t = p.detach().contiguous();
    const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
    for (size_t i = 0; i < static_cast<size_t>(t.nbytes()); ++i) {
      h ^= bytes[i];
      h *= 1099511628211ull;
    }
  }
  return h;
}

}  // namespace digits
