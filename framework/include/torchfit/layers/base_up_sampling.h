#pragma once
/// @file base_up_sampling.h
/// The base of the up-sampling layers (UpSampling1D/2D/3D, as keras.layers's): the factors, the shapes,
/// the nearest repeat and its ONNX Resize; each layer adds its options (UpSampling2D its bilinear mode).
#include <string>
#include <vector>

#include <torchfit/io/onnx_graph.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// The up-sampling family: each step, pixel or voxel repeated `size` times along each spatial axis
/// (nearest). Inputs, Keras order → tensor: a sequence (steps, C) held (N, steps, C); an image (H, W, C)
/// held (N, C, H, W); a volume (D, H, W, C) held (N, D, H, W, C); each spatial size n → n·s. No parameters.
/// Errors: ConfigError naming the layer for a factor ≤ 0 (construction), an input of another rank (build).
class UpSamplingLayer : public Layer {
 public:
  /// ONNX: Resize, nearest (asymmetric, floor: source floor(i / s)) over (N, C, H, W), the only rank OpenCV 4.6
  /// resizes: an image as it is; a sequence as an (N, C, 1, steps) image (Transpose, Reshape, as Conv1D); a
  /// volume channels first as (N, C·D, H, W) resized over H, W, then (N, C, D, H'·W') over D, Reshaped and
  /// Transposed back.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// UpSampling3D: its Reshapes hold the built volume (a sequence or an image holds none).
  bool onnx_holds_built_size() const override { return size_.size() == 3; }
  at::Tensor forward(const at::Tensor& x) override;

 protected:
  /// `size`: the factor of each spatial axis, in Keras order.
  UpSamplingLayer(const char* class_name, const std::string& name, std::vector<int64_t> size);
  Shape build_impl(const Shape& input_shape) override;
  /// A Resize node "<layer>/<what>" over `x` with `scales` (one per tensor dim) and `attributes`.
  std::string resize_node(io::OnnxGraph& g, const std::string& x, const std::vector<float>& scales,
                          std::vector<io::OnnxAttribute> attributes, const std::string& what) const;

 private:
  std::vector<int64_t> size_;
};

}  // namespace torchfit
