#pragma once
/// @file masking.h
/// Masking — marks the steps of a sequence whose features all equal mask_value as padding, as
/// keras.layers.Masking.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Masking, with Keras's default.
struct MaskingOptions : LayerOptions<MaskingOptions> {
  /// The padding value: a step whose every feature equals it is masked (default 0).
  TORCH_ARG(double, mask_value) = 0.0;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("mask_value", mask_value());
  }
};

/// Keras (steps, features) held (N, steps, features) (any rank ≥ 2; an image (H, W, C) held (N, C, H, W)
/// masks pixels): keep = any(x != mask_value) over the features (the last Keras axis); y = x · keep, the
/// output's Keras mask keep (N, steps) (keras/src/layers/core/masking.py). The layers after it that take
/// masks (LSTM, GRU, SimpleRNN, Bidirectional, the attention layers, GlobalAveragePooling1D) skip the masked
/// steps. No parameters. ONNX: its values (Equal, Not, ReduceMax as a Cast to float, Mul); saving's export
/// refuses a model where its mask reaches a layer that computes with it (Model::masked_consumers).
/// Errors: ConfigError for a non-finite mask_value or an input of rank < 2 (Keras (steps, features)).
class MaskingImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Masking);

 public:
  explicit MaskingImpl(MaskingOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  bool supports_masking() const override { return true; }
  bool makes_mask() const override { return true; }
  /// any(x != mask_value) over the features: (N, steps) for a sequence.
  at::Tensor compute_mask(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) const override;
  nlohmann::json config() const override { return base_config(options); }
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  MaskingOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  at::Tensor keep(const at::Tensor& x) const;  // keepdim
};
TORCH_MODULE(Masking);

}  // namespace torchfit
