#pragma once
/// @file base_edges.h
/// The base of the edge layers — ZeroPadding1D/2D/3D (zeros added) and Cropping1D/2D/3D (values removed)
/// before and after each spatial axis — as keras.layers's: the options, the shapes, the forward, the ONNX
/// Pad / Slice; each layer names its Edges type and Keras default.
#include <string>
#include <vector>

#include <torch/arg.h>

#include <torchfit/layers/edges.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of ZeroPadding1D/2D/3D (`E` = Edges1D/2D/3D). Keras default: 1 on every edge.
template <class E>
struct ZeroPaddingOptions : LayerOptions<ZeroPaddingOptions<E>> {
  ZeroPaddingOptions(E padding = 1) : padding_(padding) {}  // NOLINT: ZeroPadding2DOptions(2)
  /// Zeros added before and after each spatial axis (each ≥ 0), in any of E's Keras forms. Default 1.
  TORCH_ARG(E, padding);

 public:
  static constexpr bool crops = false;
  const E& edges() const { return padding_; }
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("padding", padding());
  }
};

/// Options of Cropping1D/2D/3D (`E` = Edges1D/2D/3D); Keras's default `Default` on every edge (1 for
/// Cropping1D and Cropping3D, 0 for Cropping2D).
template <class E, int64_t Default>
struct CroppingOptions : LayerOptions<CroppingOptions<E, Default>> {
  CroppingOptions(E cropping = Default) : cropping_(cropping) {}  // NOLINT: Cropping2DOptions(2)
  /// Values removed before and after each spatial axis (each ≥ 0), in any of E's Keras forms.
  TORCH_ARG(E, cropping);

 public:
  static constexpr bool crops = true;
  const E& edges() const { return cropping_; }
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("cropping", cropping());
  }
};

/// The edge layers' family: zeros added (ZeroPadding) or values removed (Cropping, a view of the input)
/// before and after each spatial axis. Inputs, Keras order → tensor: a sequence (steps, C) held
/// (N, steps, C); an image (H, W, C) held (N, C, H, W); a volume (D, H, W, C) held (N, D, H, W, C). Each
/// spatial size n becomes n + before + after (padding) or n − before − after (cropping). No parameters.
/// Errors: ConfigError naming the layer for a negative edge (construction), an input of another rank or a
/// cropping that leaves nothing (build).
class EdgesLayer : public Layer {
 public:
  /// ONNX: Pad (constant 0) or Slice over the spatial axes (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// Cropping: its Slice's ends are the built sizes less the edges; ZeroPadding's Pad holds none.
  bool onnx_holds_built_size() const override { return crop_; }
  at::Tensor forward(const at::Tensor& x) override;

 protected:
  /// `edges`: (before, after) per spatial axis (Edges::flat), `edges_text` as messages write them
  /// (Edges::text); `crop`: remove them, else pad zeros.
  EdgesLayer(const char* class_name, const std::string& name, std::vector<int64_t> edges, std::string edges_text,
             bool crop);
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> edges_;
  std::string edges_text_;
  bool crop_;
};

/// An edge layer with its options (ZeroPaddingOptions or CroppingOptions); see EdgesLayer.
template <class Options>
class EdgesImpl : public EdgesLayer {
 public:
  nlohmann::json config() const override { return base_config(options); }
  Options options;

 protected:
  EdgesImpl(const char* class_name, Options opts)
      : EdgesLayer(class_name, opts.name(), opts.edges().flat(), opts.edges().text(), Options::crops),
        options(std::move(opts)) {
    set_declared_input_shape(options.input_shape());
    options.edges().check_non_negative(describe(), Options::crops ? "cropping" : "padding");
  }
};

}  // namespace torchfit
