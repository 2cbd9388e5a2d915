#pragma once
/// @file zero_padding2d.h
/// ZeroPadding2D — rows and columns of zeros around an image, as keras.layers.ZeroPadding2D.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_edges.h>

namespace torchfit {

/// Options of ZeroPadding2D (base_edges.h): `padding` an Edges2D, Keras default 1 on every edge.
using ZeroPadding2DOptions = ZeroPaddingOptions<Edges2D>;

/// Pads with zeros: input (N, C, H, W) [Keras (H, W, C)], output (N, C, H + top + bottom,
/// W + left + right). No parameters. Errors and the ONNX Pad: EdgesLayer (base_edges.h).
class ZeroPadding2DImpl : public EdgesImpl<ZeroPadding2DOptions> {
  TORCHFIT_LAYER_CLASS(ZeroPadding2D);

 public:
  explicit ZeroPadding2DImpl(ZeroPadding2DOptions options = {}) : EdgesImpl(keras_class_name, std::move(options)) {}
};
TORCH_MODULE(ZeroPadding2D);

}  // namespace torchfit
