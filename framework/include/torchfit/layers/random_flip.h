#pragma once
/// @file random_flip.h
/// RandomFlip — flips images at random in training, as keras.layers.RandomFlip (Keras 3).
#include <string>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of RandomFlip (Keras 3's arguments and defaults).
struct RandomFlipOptions : LayerOptions<RandomFlipOptions> {
  /// "horizontal" (left-right), "vertical" (top-bottom) or "horizontal_and_vertical" (default).
  TORCH_ARG(std::string, mode) = "horizontal_and_vertical";

 public:
  template <typename Args>
  void args(Args& a) {
    a("mode", mode());
  }
};

/// In train(): each image of the batch is flipped with probability 1/2 — one uniform draw u per image,
/// flipped when u ≤ 0.5, as Keras 3's get_random_transformation; "horizontal_and_vertical" applies both flips
/// to the same images (Keras 3's one draw: a half turn, not two independent flips). In eval(): the input.
/// Input (N, C, H, W) [Keras (H, W, C)], output the same. The draws come from LibTorch's generator
/// (at::manual_seed), as the noise layers' do (Keras's `seed` is not read), so a checkpoint's resume repeats
/// them. No parameters. Errors: ConfigError naming the layer for another mode (construction) or a
/// non-image input (build).
class RandomFlipImpl : public Layer {
  TORCHFIT_LAYER_CLASS(RandomFlip);

 public:
  explicit RandomFlipImpl(RandomFlipOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  /// ONNX: none, its input passes through (inference).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  RandomFlipOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(RandomFlip);

}  // namespace torchfit
