#pragma once
/// @file base_conv.h
/// The base of the 2-D convolution layers (Conv2D, DepthwiseConv2D; SeparableConv2D and
/// Conv2DTranspose build on it too), as Keras's keras/src/layers/convolutional/base_conv.py: the window
/// arguments every convolution takes (kernel_size, strides, padding, dilation_rate, activation,
/// use_bias), their checks, the output size with TensorFlow's "same" padding, and the activation.
/// Each layer adds its own arguments (filters, depth_multiplier, output_padding), its parameters and,
/// where it differs, its convolution (SeparableConv2D) and output size (Conv2DTranspose).
#include <array>
#include <string>
#include <vector>

#include <torch/expanding_array.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// The window arguments of a 2-D convolution, with Keras's defaults; `Derived` is the layer's options
/// struct, which the chained setters return: `Conv2DOptions(32, 3).strides(2).activation("relu")`.
template <typename Derived>
struct ConvOptions : LayerOptions<Derived> {
  explicit ConvOptions(torch::ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}
  /// Kernel (height, width) in pixels; an int means square. Required.
  TORCHFIT_ARG(Derived, torch::ExpandingArray<2>, kernel_size);
  /// Strides (rows, cols) in pixels. Default 1.
  TORCHFIT_ARG(Derived, torch::ExpandingArray<2>, strides) = 1;
  /// "valid" (no padding, default) or "same" (output = ceil(input / stride); TensorFlow's padding, the
  /// extra pixel at the bottom/right).
  TORCHFIT_ARG(Derived, std::string, padding) = "valid";
  /// Dilation rate (rows, cols). Default 1.
  TORCHFIT_ARG(Derived, torch::ExpandingArray<2>, dilation_rate) = 1;
  /// A name from activation_names() (layers/activation_fn.h: relu, gelu, silu, softmax, …; default linear).
  TORCHFIT_ARG(Derived, std::string, activation) = "linear";
  /// Add a bias per output channel (default true; zero-initialised).
  TORCHFIT_ARG(Derived, bool, use_bias) = true;

 public:
  /// The window arguments (layer_args.h); a layer's args() lists its own and then calls this.
  template <typename Args>
  void window_args(Args& a) {
    a.required("kernel_size", kernel_size());
    a("strides", strides());
    a("padding", padding());
    a("dilation_rate", dilation_rate());
    a("activation", activation());
    a("use_bias", use_bias());
  }
};

namespace detail {
/// ConfigError naming `who` unless kernel, strides and dilation are > 0, padding is "valid" or "same"
/// and `activation` is known.
void check_conv_options(const std::string& who, at::IntArrayRef kernel, at::IntArrayRef strides,
                        at::IntArrayRef dilation, const std::string& padding, const std::string& activation);
/// (H', W') of the window over the Keras input (H, W, C) and the "same" padding (top, bottom, left,
/// right) into `pad`. ConfigError naming `who` for a non-3-D input or a kernel larger than a "valid" input.
std::array<int64_t, 2> conv_output_hw(const std::string& who, const Shape& in, at::IntArrayRef kernel,
                                      at::IntArrayRef strides, at::IntArrayRef dilation, const std::string& padding,
                                      std::vector<int64_t>& pad);
/// at::conv2d with that padding (asymmetric "same" padding applied explicitly first). With
/// `contiguous_on_cpu` a CPU convolution of channels_last input runs on contiguous copies; the output
/// keeps the input's layout.
at::Tensor conv2d_window(const at::Tensor& x, const at::Tensor& kernel, const at::Tensor& bias, at::IntArrayRef strides,
                         at::IntArrayRef dilation, const std::vector<int64_t>& pad, int64_t groups,
                         bool contiguous_on_cpu);
}  // namespace detail

/// A 2-D convolution layer: input (N, C_in, H, W) [Keras (H, W, C_in)], output (N, C_out, H', W')
/// [Keras (H', W', C_out)] with, per axis, valid: H' = floor((H − d·(k−1) − 1) / s) + 1; same:
/// H' = ceil(H / s). forward() is the activation over forward_without_activation(), the convolution with
/// `kernel` (C_out, C_in / groups, k_h, k_w) and `bias` (C_out; undefined without use_bias) that the
/// layer's make_kernel() creates at build. Errors (at construction): ConfigError for a
/// kernel/stride/dilation ≤ 0 or an unknown padding or activation; (at build) for a non-3-D input or a
/// kernel larger than a "valid" input.
template <typename Options>
class BaseConv2DImpl : public Layer {
 public:
  at::Tensor forward(const at::Tensor& x) override {
    return apply_activation(options.activation(), forward_without_activation(x), /*inplace=*/true);
  }
  at::Tensor forward_without_activation(const at::Tensor& x) override { return window_conv(x, bias); }
  std::string output_activation() const override { return options.activation(); }
  nlohmann::json config() const override { return base_config(options); }
  /// 2·k_h·k_w·(C_in / groups)·C_out·H'·W'.
  int64_t flops_per_sample() const override {
    if (!built()) return 0;
    const auto k = *options.kernel_size();
    const auto& o = output_shape();
    return 2 * k[0] * k[1] * (input_shape()[2] / groups_) * o[0] * o[1] * o[2];
  }

  /// The explicit padding, (top, bottom, left, right), from build: "same"'s (TensorFlow's rule, the extra
  /// pixel at the bottom/right) or, for Conv2DTranspose, rows cropped (> 0) or appended (< 0) after the
  /// full transposed convolution. Empty before build.
  const std::vector<int64_t>& padding_edges() const { return pad_; }

  Options options;
  /// The weights (Keras base_conv's kernel and bias); undefined before build.
  at::Tensor kernel, bias;

 protected:
  /// `class_name` is the layer's Keras class name (its TORCHFIT_LAYER_CLASS).
  BaseConv2DImpl(const char* class_name, Options opts) : Layer(class_name, opts.name()), options(std::move(opts)) {
    set_declared_input_shape(options.input_shape());
    detail::check_conv_options(describe(), *options.kernel_size(), *options.strides(), *options.dilation_rate(),
                               options.padding(), options.activation());
  }
  /// What a layer of the family creates at build for `in_channels` input channels: its registered kernel
  /// and bias (undefined without use_bias), the convolution's groups, and whether the CPU convolution
  /// must run on contiguous copies of channels_last input (a LibTorch defect, see DepthwiseConv2D).
  struct Weights {
    at::Tensor kernel, bias;
    int64_t groups = 1;
    bool contiguous_on_cpu = false;
    /// Output channels (0 ⇒ kernel.size(0); SeparableConv2D's and Conv2DTranspose's differ).
    int64_t filters = 0;
  };
  virtual Weights make_weights(int64_t in_channels) = 0;
  /// (H', W') for the Keras input (H, W, C); sets the padding. Default: the window's output (valid/same),
  /// Conv2DTranspose overrides it.
  virtual std::array<int64_t, 2> output_hw(const Shape& in) {
    return detail::conv_output_hw(describe(), in, *options.kernel_size(), *options.strides(), *options.dilation_rate(),
                                  options.padding(), pad_);
  }
  Shape build_impl(const Shape& in) override {
    const auto hw = output_hw(in);
    Weights w = make_weights(in[2]);
    kernel = w.kernel;
    bias = w.bias;
    groups_ = w.groups;
    contiguous_on_cpu_ = w.contiguous_on_cpu;
    return {hw[0], hw[1], w.filters > 0 ? w.filters : kernel.size(0)};
  }
  /// The window convolution of `x` with `kernel` and `b` (the layer's padding, strides, groups).
  at::Tensor window_conv(const at::Tensor& x, const at::Tensor& b) const {
    return detail::conv2d_window(x, kernel, b, *options.strides(), *options.dilation_rate(), pads_for(x), groups_,
                                 contiguous_on_cpu_);
  }
  /// The (top, bottom, left, right) padding of the (N, C, H, W) input `x`: the one from build, or for x's
  /// own (H, W) when the layer also takes another size ("same" with strides, a shared layer, an input of
  /// unknown size).
  std::vector<int64_t> pads_for(const at::Tensor& x) const {
    if (options.padding() != "same" || !built()) return pad_;  // during build: the size being built
    const Shape& in = input_shape();
    if (x.size(2) == in[0] && x.size(3) == in[1]) return pad_;
    std::vector<int64_t> pad;
    detail::conv_output_hw(describe(), {x.size(2), x.size(3), in[2]}, *options.kernel_size(), *options.strides(),
                           *options.dilation_rate(), "same", pad);
    return pad;
  }

  std::vector<int64_t> pad_;  // (top, bottom, left, right) for "same"

 private:
  int64_t groups_ = 1;
  bool contiguous_on_cpu_ = false;
};

}  // namespace torchfit
