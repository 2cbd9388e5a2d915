#pragma once
// Debian's Fashion-MNIST (dataset-fashion-mnist) as tensors, for tests that learn on real data.
#include <filesystem>
#include <string>
#include <utility>

#include <ATen/ATen.h>

#include <torchfit/data/idx.h>

namespace torchfit::testing {

inline const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// True when the Debian package's files are installed (tests GTEST_SKIP otherwise).
inline bool fashion_mnist_installed() {
  return std::filesystem::exists(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz");
}

/// Split `prefix` ("train" or "t10k"): images (N, 1, 28, 28) float32 in 0..1 and labels (N) int64.
inline std::pair<at::Tensor, at::Tensor> fashion_mnist(const std::string& prefix) {
  auto images = data::read_idx_file(std::string(kFashionMnistDir) + "/" + prefix + "-images-idx3-ubyte.gz");
  auto labels = data::read_idx_file(std::string(kFashionMnistDir) + "/" + prefix + "-labels-idx1-ubyte.gz");
  auto x = at::from_blob(images.data.data(), {images.dims[0], 1, 28, 28}, at::kByte).to(at::kFloat) / 255.0;
  auto l = at::from_blob(labels.data.data(), {labels.dims[0]}, at::kByte).to(at::kLong);
  return {x, l};
}

}  // namespace torchfit::testing
