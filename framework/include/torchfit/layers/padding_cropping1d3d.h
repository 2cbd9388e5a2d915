#pragma once
/// @file padding_cropping1d3d.h
/// ZeroPadding1D, Cropping1D (sequences) and ZeroPadding3D, Cropping3D (volumes), as the keras.layers
/// classes of the same names, on the edge layers' base (base_edges.h).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_edges.h>

namespace torchfit {

/// Options of ZeroPadding1D: `padding` an Edges1D (an int or (left, right)), Keras default 1.
using ZeroPadding1DOptions = ZeroPaddingOptions<Edges1D>;
/// Options of ZeroPadding3D: `padding` an Edges3D (an int, 3 ints or 3 pairs), Keras default 1.
using ZeroPadding3DOptions = ZeroPaddingOptions<Edges3D>;
/// Options of Cropping1D: `cropping` an Edges1D, Keras default (1, 1).
using Cropping1DOptions = CroppingOptions<Edges1D, 1>;
/// Options of Cropping3D: `cropping` an Edges3D, Keras default ((1, 1), (1, 1), (1, 1)).
using Cropping3DOptions = CroppingOptions<Edges3D, 1>;

/// Zeros before and after a sequence's steps: Keras (steps, C) → (left + steps + right, C), held
/// (N, steps, C). Errors, ONNX Pad: EdgesLayer.
class ZeroPadding1DImpl : public EdgesImpl<ZeroPadding1DOptions> {
  TORCHFIT_LAYER_CLASS(ZeroPadding1D);

 public:
  explicit ZeroPadding1DImpl(ZeroPadding1DOptions options = {}) : EdgesImpl(keras_class_name, std::move(options)) {}
};
TORCH_MODULE(ZeroPadding1D);

/// Zeros around a volume: Keras (D, H, W, C) → (D + d1 + d2, H + h1 + h2, W + w1 + w2, C), held
/// (N, D, H, W, C). Errors, ONNX Pad: EdgesLayer.
class ZeroPadding3DImpl : public EdgesImpl<ZeroPadding3DOptions> {
  TORCHFIT_LAYER_CLASS(ZeroPadding3D);

 public:
  explicit ZeroPadding3DImpl(ZeroPadding3DOptions options = {}) : EdgesImpl(keras_class_name, std::move(options)) {}
};
TORCH_MODULE(ZeroPadding3D);

/// Steps removed at a sequence's start and end: Keras (steps, C) → (steps − left − right, C), held
/// (N, steps, C), a view. Errors, ONNX Slice: EdgesLayer.
class Cropping1DImpl : public EdgesImpl<Cropping1DOptions> {
  TORCHFIT_LAYER_CLASS(Cropping1D);

 public:
  explicit Cropping1DImpl(Cropping1DOptions options = {}) : EdgesImpl(keras_class_name, std::move(options)) {}
};
TORCH_MODULE(Cropping1D);

/// Values removed at a volume's edges: Keras (D, H, W, C) → (D − d1 − d2, H − h1 − h2, W − w1 − w2, C), held
/// (N, D, H, W, C), a view. Errors, ONNX Slice: EdgesLayer.
class Cropping3DImpl : public EdgesImpl<Cropping3DOptions> {
  TORCHFIT_LAYER_CLASS(Cropping3D);

 public:
  explicit Cropping3DImpl(Cropping3DOptions options = {}) : EdgesImpl(keras_class_name, std::move(options)) {}
};
TORCH_MODULE(Cropping3D);

}  // namespace torchfit
