#pragma once
/// @file base_conv.h
/// The base of the convolution layers over 1, 2 and 3 spatial dimensions, as Keras's
/// keras/src/layers/convolutional/base_conv.py (and its base_conv_transpose.py, base_depthwise_conv.py,
/// base_separable_conv.py): the window arguments every convolution takes (kernel_size, strides, padding,
/// dilation_rate, activation, use_bias), their checks, the output size with TensorFlow's "same" padding
/// ("causal" for Conv1D), the kernel and bias, the convolution, the activation and the FLOP count. The
/// four kinds are the templates below, each for N = 1, 2, 3 spatial dimensions; a layer is a small member:
///   ConvNDImpl — Conv1D, Conv2D, Conv3D (adds `filters`);
///   ConvTransposeNDImpl — Conv1DTranspose, Conv2DTranspose, Conv3DTranspose (adds `filters`, `output_padding`);
///   DepthwiseConvNDImpl — DepthwiseConv1D, DepthwiseConv2D (adds `depth_multiplier`);
///   SeparableConvNDImpl — SeparableConv1D, SeparableConv2D (adds `filters`, `depth_multiplier`).
/// Tensor layouts (DESIGN.md): a sequence (steps, C) is held (N, steps, C), an image (H, W, C) (N, C, H, W),
/// a volume (D, H, W, C) (N, D, H, W, C); the 1-D and 3-D layers move the channels first for LibTorch's
/// convolutions and back (to_channels_first / from_channels_first).
#include <array>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <torch/expanding_array.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// The window arguments of an N-D convolution, with Keras's defaults; `Derived` is the layer's options
/// struct, which the chained setters return: `Conv2DOptions(32, 3).strides(2).activation("relu")`.
template <typename Derived, size_t N = 2>
struct ConvOptions : LayerOptions<Derived> {
  explicit ConvOptions(torch::ExpandingArray<N> kernel_size) : kernel_size_(kernel_size) {}
  /// Kernel size per spatial axis; an int means the same on every axis. Required.
  TORCHFIT_ARG(Derived, torch::ExpandingArray<N>, kernel_size);
  /// Strides per axis. Default 1.
  TORCHFIT_ARG(Derived, torch::ExpandingArray<N>, strides) = 1;
  /// "valid" (no padding, default) or "same" (output = ceil(input / stride); TensorFlow's padding, the
  /// extra step/pixel at the end of each axis); Conv1D also takes "causal".
  TORCHFIT_ARG(Derived, std::string, padding) = "valid";
  /// Dilation rate per axis. Default 1.
  TORCHFIT_ARG(Derived, torch::ExpandingArray<N>, dilation_rate) = 1;
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

/// ConvOptions + `filters` (required): Conv1D/2D/3D's options, the base of the transposed and separable ones.
template <typename Derived, size_t N>
struct ConvFiltersOptions : ConvOptions<Derived, N> {
  ConvFiltersOptions(int64_t filters, torch::ExpandingArray<N> kernel_size)
      : ConvOptions<Derived, N>(kernel_size), filters_(filters) {}
  /// For the registry only (layer_args.h): leaves filters and kernel_size unset, to be read from a config.
  explicit ConvFiltersOptions(FromConfig) : ConvFiltersOptions(0, 0) {}
  /// Number of output channels (> 0).
  TORCHFIT_ARG(Derived, int64_t, filters);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("filters", filters());
    this->window_args(a);
  }
};

/// ConvFiltersOptions + `output_padding`: the transposed convolutions' options.
template <typename Derived, size_t N>
struct ConvTransposeOptions : ConvFiltersOptions<Derived, N> {
  using ConvFiltersOptions<Derived, N>::ConvFiltersOptions;
  /// Extra steps/rows at the end of each output axis (each ≥ 0 and < its stride), or unset (Keras's None,
  /// default): the output size is then Keras's deconv_output_length without it (see ConvTransposeNDImpl).
  TORCHFIT_ARG(Derived, std::optional<torch::ExpandingArray<N>>, output_padding) = std::nullopt;

 public:
  template <typename Args>
  void args(Args& a) {
    ConvFiltersOptions<Derived, N>::args(a);
    a("output_padding", output_padding());
  }
};

/// ConvOptions + `depth_multiplier`: the depthwise convolutions' options (no filters).
template <typename Derived, size_t N>
struct DepthwiseConvOptions : ConvOptions<Derived, N> {
  explicit DepthwiseConvOptions(torch::ExpandingArray<N> kernel_size) : ConvOptions<Derived, N>(kernel_size) {}
  /// For the registry only (layer_args.h): leaves kernel_size unset, to be read from a config.
  explicit DepthwiseConvOptions(FromConfig) : ConvOptions<Derived, N>(0) {}
  /// Output channels per input channel (> 0). Default 1.
  TORCHFIT_ARG(Derived, int64_t, depth_multiplier) = 1;

 public:
  template <typename Args>
  void args(Args& a) {
    a("depth_multiplier", depth_multiplier());
    this->window_args(a);
  }
};

/// ConvFiltersOptions + `depth_multiplier`: the separable convolutions' options; the window arguments apply
/// to the depthwise step, the pointwise step is a 1-wide window with stride 1.
template <typename Derived, size_t N>
struct SeparableConvOptions : ConvFiltersOptions<Derived, N> {
  using ConvFiltersOptions<Derived, N>::ConvFiltersOptions;
  /// Depthwise output channels per input channel (> 0). Default 1.
  TORCHFIT_ARG(Derived, int64_t, depth_multiplier) = 1;

 public:
  template <typename Args>
  void args(Args& a) {
    ConvFiltersOptions<Derived, N>::args(a);
    a("depth_multiplier", depth_multiplier());
  }
};

namespace detail {
/// ConfigError naming `who` unless kernel, strides and dilation are > 0, padding is "valid" or "same" (or
/// "causal" with `causal`) and `activation` is known.
void check_conv_options(const std::string& who, at::IntArrayRef kernel, at::IntArrayRef strides,
                        at::IntArrayRef dilation, const std::string& padding, const std::string& activation,
                        bool causal);
/// ConfigError "<who>: <what> must be > 0, got v" unless v > 0.
void check_positive(const std::string& who, const char* what, int64_t v);
/// The spatial output sizes of the window over the Keras input (spatial…, C) and the padding (before,
/// after per axis) into `pad`. ConfigError naming `who` for an input of another rank or a kernel larger
/// than a "valid" input.
std::vector<int64_t> conv_output_size(const std::string& who, const Shape& in, at::IntArrayRef kernel,
                                      at::IntArrayRef strides, at::IntArrayRef dilation, const std::string& padding,
                                      std::vector<int64_t>& pad);
/// The convolution of the channels-first `x` (N, C, spatial…) with that padding (asymmetric padding applied
/// explicitly first; 2-D through torchfit's conv2d_train). With `contiguous_on_cpu` a CPU convolution of
/// channels_last input runs on contiguous copies; the output keeps the input's layout.
at::Tensor conv_window(const at::Tensor& x, const at::Tensor& kernel, const at::Tensor& bias, at::IntArrayRef strides,
                       at::IntArrayRef dilation, const std::vector<int64_t>& pad, int64_t groups,
                       bool contiguous_on_cpu);
/// The 1-wide convolution (separable's pointwise step) of the channels-first `x`.
at::Tensor pointwise_conv(const at::Tensor& x, const at::Tensor& kernel, const at::Tensor& bias);
/// ConfigError naming `who` unless every output_padding is ≥ 0 and smaller than its stride (as Keras).
void check_output_padding(const std::string& who, const std::optional<std::vector<int64_t>>& output_padding,
                          at::IntArrayRef strides);
/// A transposed convolution's spatial output sizes (Keras's conv_utils.deconv_output_length per axis) and
/// the edges cropped (> 0) or appended (< 0) after the full result into `pad`. ConfigError naming `who`
/// for an input of another rank or an empty output.
std::vector<int64_t> conv_transpose_output_size(const std::string& who, const Shape& in, at::IntArrayRef kernel,
                                                at::IntArrayRef strides, at::IntArrayRef dilation,
                                                const std::string& padding,
                                                const std::optional<std::vector<int64_t>>& output_padding,
                                                std::vector<int64_t>& pad);
/// The full transposed convolution of the channels-first `x`, cropped/extended by `pad`, plus the bias.
at::Tensor conv_transpose_window(const at::Tensor& x, const at::Tensor& kernel, const at::Tensor& bias,
                                 at::IntArrayRef strides, at::IntArrayRef dilation, const std::vector<int64_t>& pad);
/// A kernel (a, b, k…) glorot_uniform with Keras's fans ∏k·fan_in_channels, ∏k·fan_out_channels.
at::Tensor conv_kernel_init(int64_t a, int64_t b, at::IntArrayRef k, int64_t fan_in_channels, int64_t fan_out_channels);
/// Keras weights of a kernel stored (k…, a, b) in Keras and (b, a, k…) here (Conv, ConvTranspose: a Keras 1
/// "th" 2-D kernel is stored so already, Theano's flipped), and bias when defined: [kernel, bias].
void set_conv_keras_weights(const std::string& who, at::Tensor& kernel, at::Tensor& bias,
                            const std::vector<at::Tensor>& weights, const KerasWeightOptions& options);
std::vector<at::Tensor> conv_keras_weights(const at::Tensor& kernel, const at::Tensor& bias);
/// The same for a depthwise kernel: Keras (k…, C, m), here (C·m, 1, k…) (output channel c·m + j).
void set_depthwise_keras_weights(const std::string& who, at::Tensor& kernel, at::Tensor& bias,
                                 const std::vector<at::Tensor>& weights, const KerasWeightOptions& options);
std::vector<at::Tensor> depthwise_keras_weights(const at::Tensor& kernel, const at::Tensor& bias, int64_t channels);
/// The same for a separable convolution: [depthwise_kernel, pointwise_kernel (1…, C·m, F) ↔ (F, C·m, 1…), bias].
void set_separable_keras_weights(const std::string& who, at::Tensor& depthwise, at::Tensor& pointwise, at::Tensor& bias,
                                 const std::vector<at::Tensor>& weights, const KerasWeightOptions& options);
std::vector<at::Tensor> separable_keras_weights(const at::Tensor& depthwise, const at::Tensor& pointwise,
                                                const at::Tensor& bias, int64_t channels);
/// ∏ of the entries.
inline int64_t product(at::IntArrayRef a) {
  return std::accumulate(a.begin(), a.end(), int64_t{1}, std::multiplies<>());
}
/// An optional window argument as a vector.
template <size_t N>
std::optional<std::vector<int64_t>> optional_vector(const std::optional<torch::ExpandingArray<N>>& a) {
  if (!a) return std::nullopt;
  return std::vector<int64_t>((*a)->begin(), (*a)->end());
}
}  // namespace detail

/// An N-D convolution layer: input (spatial…, C_in) → output (spatial'…, C_out) in Keras order, with per axis
/// valid: n' = floor((n − d·(k − 1) − 1) / s) + 1; same: n' = ceil(n / s); causal (1-D): n' = ceil(n / s),
/// (k − 1)·d zeros before. Tensors: (N, steps, C), (N, C, H, W), (N, D, H, W, C) (see the file comment).
/// forward() is the activation over forward_without_activation(), the convolution with `kernel`
/// (C_out, C_in / groups, k…) and `bias` (C_out; undefined without use_bias) that the layer's
/// make_weights() creates at build. Errors (at construction): ConfigError for a kernel/stride/dilation ≤ 0
/// or an unknown padding or activation; (at build) for an input of another rank or a kernel larger than a
/// "valid" input.
template <typename Options, size_t N = 2>
class BaseConvImpl : public Layer {
 public:
  /// The number of spatial axes (1: sequences, 2: images, 3: volumes).
  static constexpr size_t spatial_dims = N;
  at::Tensor forward(const at::Tensor& x) override {
    return apply_activation(options.activation(), forward_without_activation(x), /*inplace=*/true);
  }
  at::Tensor forward_without_activation(const at::Tensor& x) override {
    return from_channels_first(window_conv(to_channels_first(x), bias));
  }
  std::string output_activation() const override { return options.activation(); }
  nlohmann::json config() const override { return base_config(options); }
  /// 2·∏k·(C_in / groups)·C_out·∏(output sizes).
  int64_t flops_per_sample() const override {
    if (!built()) return 0;
    return 2 * detail::product(*options.kernel_size()) * (input_shape()[N] / groups_) * detail::product(output_shape());
  }

  /// The explicit padding, (before, after) per spatial axis, from build: "same"'s (TensorFlow's rule, the
  /// extra step/pixel at the end) or "causal"'s or, for a transposed convolution, the steps cropped (> 0) or
  /// appended (< 0) after the full transposed convolution. Empty before build.
  const std::vector<int64_t>& padding_edges() const { return pad_; }
  /// The layer's tensor (N, spatial…, C) as (N, C, spatial…) for LibTorch; an image is held so already.
  static at::Tensor to_channels_first(const at::Tensor& x) { return N == 2 ? x : x.movedim(-1, 1); }
  /// The inverse of to_channels_first.
  static at::Tensor from_channels_first(const at::Tensor& y) { return N == 2 ? y : y.movedim(1, -1); }

  Options options;
  /// The weights (Keras base_conv's kernel and bias); undefined before build.
  at::Tensor kernel, bias;

 protected:
  /// `class_name` is the layer's Keras class name (its TORCHFIT_LAYER_CLASS); `causal`: the padding may be
  /// "causal" (Conv1D).
  BaseConvImpl(const char* class_name, Options opts, bool causal = false)
      : Layer(class_name, opts.name()), options(std::move(opts)) {
    set_declared_input_shape(options.input_shape());
    detail::check_conv_options(describe(), *options.kernel_size(), *options.strides(), *options.dilation_rate(),
                               options.padding(), options.activation(), causal);
  }
  /// What a layer of the family creates at build for `in_channels` input channels: its registered kernel
  /// and bias (undefined without use_bias), the convolution's groups, and whether the CPU convolution
  /// must run on contiguous copies of channels_last input (a LibTorch defect, see DepthwiseConv2D).
  struct Weights {
    at::Tensor kernel, bias;
    int64_t groups = 1;
    bool contiguous_on_cpu = false;
    /// Output channels (0 ⇒ kernel.size(0); the separable and transposed convolutions' differ).
    int64_t filters = 0;
  };
  virtual Weights make_weights(int64_t in_channels) = 0;
  /// The spatial output sizes for the Keras input (spatial…, C); sets the padding. Default: the window's
  /// output (valid/same/causal); the transposed convolutions override it.
  virtual std::vector<int64_t> output_size(const Shape& in) {
    return detail::conv_output_size(describe(), in, *options.kernel_size(), *options.strides(),
                                    *options.dilation_rate(), options.padding(), pad_);
  }
  Shape build_impl(const Shape& in) override {
    Shape out = output_size(in);
    Weights w = make_weights(in[N]);
    kernel = w.kernel;
    bias = w.bias;
    groups_ = w.groups;
    contiguous_on_cpu_ = w.contiguous_on_cpu;
    out.push_back(w.filters > 0 ? w.filters : kernel.size(0));
    return out;
  }
  /// A bias of `n` zeros registered as "bias" when use_bias (undefined otherwise).
  at::Tensor make_bias(int64_t n) {
    return options.use_bias() ? register_parameter("bias", at::zeros({n})) : at::Tensor();
  }
  /// The window convolution of the channels-first `x` with `kernel` and `b` (the layer's padding, strides, groups).
  at::Tensor window_conv(const at::Tensor& x, const at::Tensor& b) const {
    return detail::conv_window(x, kernel, b, *options.strides(), *options.dilation_rate(), pads_for(x), groups_,
                               contiguous_on_cpu_);
  }
  /// The padding of the channels-first `x`: the one from build, or for x's own sizes when the layer also
  /// takes another size ("same" with strides, a shared layer, an input of unknown size).
  std::vector<int64_t> pads_for(const at::Tensor& x) const {
    if (options.padding() != "same" || !built()) return pad_;  // during build: the size being built
    const Shape& in = input_shape();
    Shape own(x.sizes().begin() + 2, x.sizes().end());
    own.push_back(in[N]);
    if (own == in) return pad_;
    std::vector<int64_t> pad;
    detail::conv_output_size(describe(), own, *options.kernel_size(), *options.strides(), *options.dilation_rate(),
                             "same", pad);
    return pad;
  }

  std::vector<int64_t> pad_;  // (before, after) per spatial axis

 private:
  int64_t groups_ = 1;
  bool contiguous_on_cpu_ = false;
};

/// Conv1D, Conv2D, Conv3D: output channels = filters. Parameters: `kernel` (filters, C_in, k…)
/// [Keras (k…, C_in, filters)], glorot_uniform (fans ∏k·C_in, ∏k·filters); `bias` (filters), zeros
/// (Keras defaults). Errors: ConfigError for filters ≤ 0, and BaseConvImpl's.
template <typename Options, size_t N>
class ConvNDImpl : public BaseConvImpl<Options, N> {
 protected:
  using Weights = typename BaseConvImpl<Options, N>::Weights;
  ConvNDImpl(const char* class_name, Options opts, bool causal = false)
      : BaseConvImpl<Options, N>(class_name, std::move(opts), causal) {
    detail::check_positive(this->describe(), "filters", this->options.filters());
  }
  Weights make_weights(int64_t cin) override {
    const int64_t f = this->options.filters();
    Weights w;
    w.kernel =
        this->register_parameter("kernel", detail::conv_kernel_init(f, cin, *this->options.kernel_size(), cin, f));
    w.bias = this->make_bias(f);
    return w;
  }
  /// Keras weights: kernel (k…, C_in, F), bias (F).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) override {
    detail::set_conv_keras_weights(this->describe(), this->kernel, this->bias, weights, o);
  }
  std::vector<at::Tensor> keras_weights_impl() const override {
    return detail::conv_keras_weights(this->kernel, this->bias);
  }
};

/// Conv1DTranspose, Conv2DTranspose, Conv3DTranspose: the gradient (adjoint) of the matching convolution
/// with the same kernel size, strides, dilation and padding, as TensorFlow's conv_transpose. Per axis
/// (k' = d·(k − 1) + 1, Keras's conv_utils.deconv_output_length):
///   output_padding unset: valid n' = n·s + max(k' − s, 0); same n' = n·s;
///   output_padding p:     n' = (n − 1)·s + k' − 2·pad + p, pad = k' // 2 (same) or 0 (valid).
/// The full transposed convolution ((n − 1)·s + k' steps) is cropped to n' starting at
/// pad_before = max((n − 1)·s + k' − n', 0) // 2 for "same" (TensorFlow's padding of the matching
/// convolution: the odd step is cut at the END), 0 for "valid"; steps past the full result are zeros (+ bias).
/// Parameters: `kernel` (C_in, filters, k…) — LibTorch's conv_transpose layout; Keras stores
/// (k…, filters, C_in) — glorot_uniform (Keras's fans ∏k·filters, ∏k·C_in); `bias` (filters), zeros.
/// Errors: ConfigError for filters ≤ 0 or an output_padding < 0 or ≥ its stride (as Keras), an input
/// giving an empty output, and BaseConvImpl's.
template <typename Options, size_t N>
class ConvTransposeNDImpl : public BaseConvImpl<Options, N> {
 public:
  /// True: its "same" crop and output_padding follow the built size.
  bool onnx_holds_built_size() const override { return true; }
  at::Tensor forward_without_activation(const at::Tensor& x) override {
    return this->from_channels_first(detail::conv_transpose_window(this->to_channels_first(x), this->kernel, this->bias,
                                                                   *this->options.strides(),
                                                                   *this->options.dilation_rate(), this->pad_));
  }
  /// 2·∏k·C_in·filters·∏(input sizes) (each input step/pixel meets the whole kernel).
  int64_t flops_per_sample() const override {
    if (!this->built()) return 0;
    const Shape& in = this->input_shape();
    return 2 * detail::product(*this->options.kernel_size()) * this->options.filters() * detail::product(in);
  }

 protected:
  using Weights = typename BaseConvImpl<Options, N>::Weights;
  ConvTransposeNDImpl(const char* class_name, Options opts) : BaseConvImpl<Options, N>(class_name, std::move(opts)) {
    detail::check_positive(this->describe(), "filters", this->options.filters());
    detail::check_output_padding(this->describe(), detail::optional_vector(this->options.output_padding()),
                                 *this->options.strides());
  }
  Weights make_weights(int64_t cin) override {
    const int64_t f = this->options.filters();
    Weights w;
    w.kernel =
        this->register_parameter("kernel", detail::conv_kernel_init(cin, f, *this->options.kernel_size(), f, cin));
    w.bias = this->make_bias(f);
    w.filters = f;
    return w;
  }
  std::vector<int64_t> output_size(const Shape& in) override {
    return detail::conv_transpose_output_size(
        this->describe(), in, *this->options.kernel_size(), *this->options.strides(), *this->options.dilation_rate(),
        this->options.padding(), detail::optional_vector(this->options.output_padding()), this->pad_);
  }
  /// Keras weights: kernel (k…, F, C_in) — the same permutation as a convolution kernel's — and bias (F).
  /// Keras 2+ only (Keras 1's Deconvolution2D is not read).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) override {
    detail::set_conv_keras_weights(this->describe(), this->kernel, this->bias, weights, o);
  }
  std::vector<at::Tensor> keras_weights_impl() const override {
    return detail::conv_keras_weights(this->kernel, this->bias);
  }
};

/// DepthwiseConv1D, DepthwiseConv2D: each input channel is convolved with its own `depth_multiplier` m
/// kernels; output channels C·m, output channel c·m + j from input channel c (TensorFlow's order).
/// Parameters: `depthwise_kernel` (C·m, 1, k…) [Keras (k…, C, m)], glorot_uniform (fans ∏k·C, ∏k·m);
/// `bias` (C·m), zeros. Errors: ConfigError for a multiplier ≤ 0, and BaseConvImpl's.
template <typename Options, size_t N>
class DepthwiseConvNDImpl : public BaseConvImpl<Options, N> {
 public:
  /// Keras's name for `kernel` in this layer (the parameter's name too): (C·m, 1, k…).
  at::Tensor& depthwise_kernel = this->kernel;

 protected:
  using Weights = typename BaseConvImpl<Options, N>::Weights;
  DepthwiseConvNDImpl(const char* class_name, Options opts) : BaseConvImpl<Options, N>(class_name, std::move(opts)) {
    detail::check_positive(this->describe(), "depth_multiplier", this->options.depth_multiplier());
  }
  Weights make_weights(int64_t c) override {
    Weights w = depthwise_weights(c);
    w.bias = this->make_bias(c * this->options.depth_multiplier());
    return w;
  }
  /// The depthwise step's weights (no bias): groups C, `depthwise_kernel` (C·m, 1, k…) registered.
  Weights depthwise_weights(int64_t c) {
    const int64_t m = this->options.depth_multiplier();
    Weights w;
    w.groups = c;
    // LibTorch 2.6's CPU convolution (Debian 13, oneDNN 3.7) gets a channels_last grouped convolution with
    // more than one output channel per group wrong on an AMD Zen 5 (errors of 0.3-4 on inputs in 0..1;
    // the contiguous path is exact; test DepthwiseConv2D.EachChannelHasItsOwnKernelsInTensorFlowOrder).
    w.contiguous_on_cpu = m > 1;
    w.kernel = this->register_parameter("depthwise_kernel",
                                        detail::conv_kernel_init(c * m, 1, *this->options.kernel_size(), c, m));
    return w;
  }
  /// Keras weights: depthwise_kernel (k…, C, m), bias (C·m).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) override {
    detail::set_depthwise_keras_weights(this->describe(), this->kernel, this->bias, weights, o);
  }
  std::vector<at::Tensor> keras_weights_impl() const override {
    return detail::depthwise_keras_weights(this->kernel, this->bias, this->input_shape()[N]);
  }
};

/// SeparableConv1D, SeparableConv2D (TensorFlow's separable_conv2d; the 1-D one over a (1, steps) image), a
/// DepthwiseConvNDImpl with a pointwise step:
/// a depthwise convolution (as DepthwiseConvNDImpl, with the layer's strides, dilation and padding)
/// followed by a 1-wide convolution to `filters` channels, then the bias and the activation. Parameters
/// (Keras's names, registered in this order): `depthwise_kernel` (C·m, 1, k…) [Keras (k…, C, m)],
/// `pointwise_kernel` (filters, C·m, 1…) [Keras (1…, C·m, filters)], glorot_uniform with Keras's fans;
/// `bias` (filters), zeros: ∏k·C·m + C·m·filters + filters. Errors: ConfigError for filters or
/// depth_multiplier ≤ 0, and BaseConvImpl's.
template <typename Options, size_t N>
class SeparableConvNDImpl : public DepthwiseConvNDImpl<Options, N> {
 public:
  at::Tensor forward_without_activation(const at::Tensor& x) override {
    const at::Tensor d = this->window_conv(this->to_channels_first(x), {});
    return this->from_channels_first(detail::pointwise_conv(d, pointwise_kernel, this->bias));
  }
  /// The depthwise step's 2·∏k·C·m·∏n' plus the pointwise step's 2·C·m·filters·∏n'.
  int64_t flops_per_sample() const override {
    if (!this->built()) return 0;
    const int64_t cm = this->input_shape()[N] * this->options.depth_multiplier();
    const Shape& o = this->output_shape();
    const int64_t positions = detail::product(o) / o[N];
    return 2 * positions * cm * (detail::product(*this->options.kernel_size()) + this->options.filters());
  }
  /// (filters, C·m, 1…); undefined before build.
  at::Tensor pointwise_kernel;

 protected:
  using Weights = typename BaseConvImpl<Options, N>::Weights;
  SeparableConvNDImpl(const char* class_name, Options opts)
      : DepthwiseConvNDImpl<Options, N>(class_name, std::move(opts)) {
    detail::check_positive(this->describe(), "filters", this->options.filters());
  }
  Weights make_weights(int64_t c) override {
    const int64_t f = this->options.filters();
    Weights w = this->depthwise_weights(c);
    pointwise_kernel =
        this->register_parameter("pointwise_kernel", detail::conv_kernel_init(f, c * this->options.depth_multiplier(),
                                                                              std::vector<int64_t>(N, 1),
                                                                              c * this->options.depth_multiplier(), f));
    w.bias = this->make_bias(f);
    w.filters = f;
    return w;
  }
  /// Keras weights: depthwise_kernel (k…, C, m), pointwise_kernel (1…, C·m, F), bias (F).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) override {
    detail::set_separable_keras_weights(this->describe(), this->kernel, pointwise_kernel, this->bias, weights, o);
  }
  std::vector<at::Tensor> keras_weights_impl() const override {
    return detail::separable_keras_weights(this->kernel, pointwise_kernel, this->bias, this->input_shape()[N]);
  }
};

}  // namespace torchfit
