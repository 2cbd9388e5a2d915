#pragma once
/// @file cropping2d.h
/// Cropping2D — removes rows and columns at the edges of an image, as keras.layers.Cropping2D.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_edges.h>

namespace torchfit {

/// Options of Cropping2D (base_edges.h): `cropping` an Edges2D, Keras default 0 on every edge.
using Cropping2DOptions = CroppingOptions<Edges2D, 0>;

/// Crops: input (N, C, H, W) [Keras (H, W, C)], output (N, C, H − top − bottom, W − left − right), a
/// view of the input. No parameters. Errors and the ONNX Slice: EdgesLayer (base_edges.h).
class Cropping2DImpl : public EdgesImpl<Cropping2DOptions> {
  TORCHFIT_LAYER_CLASS(Cropping2D);

 public:
  explicit Cropping2DImpl(Cropping2DOptions options = {}) : EdgesImpl(keras_class_name, std::move(options)) {}
};
TORCH_MODULE(Cropping2D);

}  // namespace torchfit
