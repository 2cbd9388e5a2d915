#include <torchfit/layers/adaptive_pooling.h>

#include <ATen/ATen.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

namespace {

// Bin i of an axis of length `length` pooled to `out`: [floor(i·L/out), ceil((i+1)·L/out)) (Keras's
// ops.adaptive_*_pool, PyTorch's adaptive pooling).
std::pair<int64_t, int64_t> adaptive_bin(int64_t i, int64_t length, int64_t out) {
  return {(i * length) / out, ((i + 1) * length + out - 1) / out};
}

// The permutation to channels first (N, C, spatial…) of a held tensor with `d` spatial axes, and back.
std::vector<int64_t> to_channels_first(size_t d) {
  if (d == 1) return {0, 2, 1};
  return {0, 4, 1, 2, 3};
}
std::vector<int64_t> from_channels_first(size_t d) {
  if (d == 1) return {0, 2, 1};
  return {0, 2, 3, 4, 1};
}

}  // namespace

template <size_t D>
AdaptivePooling<D>::AdaptivePooling(const char* class_name, AdaptivePoolingOptions<D> opts, bool max)
    : Layer(class_name, opts.name()), options(std::move(opts)), max_(max) {
  for (int64_t s : *options.output_size()) {
    if (s < 1) {
      throw ConfigError(describe() + ": output_size must be >= 1 on every axis, got " +
                        format_shape(Shape(options.output_size()->begin(), options.output_size()->end())));
    }
  }
  set_declared_input_shape(options.input_shape());
}

template <size_t D>
Shape AdaptivePooling<D>::build_impl(const Shape& in) {
  if (in.size() != D + 1) {
    static const char* const expected[] = {"", "a 2-D input (steps, C)", "a 3-D input (H, W, C)",
                                           "a 4-D input (D, H, W, C)"};
    throw ConfigError(describe() + " expects " + expected[D] + ", got " + format_shape(in));
  }
  Shape out(options.output_size()->begin(), options.output_size()->end());
  out.push_back(in.back());
  return out;
}

template <size_t D>
at::Tensor AdaptivePooling<D>::forward(const at::Tensor& x) {
  const at::IntArrayRef out = *options.output_size();
  // LibTorch's kernels take (N, C, spatial…): images are held so; sequences and volumes move there and back.
  const at::Tensor cf = D == 2 ? x : x.permute(to_channels_first(D));
  at::Tensor y;
  if (D == 1) {
    y = max_ ? std::get<0>(at::adaptive_max_pool1d(cf, out)) : at::adaptive_avg_pool1d(cf, out);
  } else if (D == 2) {
    y = max_ ? std::get<0>(at::adaptive_max_pool2d(cf, out)) : at::adaptive_avg_pool2d(cf, out);
  } else {
    y = max_ ? std::get<0>(at::adaptive_max_pool3d(cf, out)) : at::adaptive_avg_pool3d(cf, out);
  }
  return D == 2 ? y : y.permute(from_channels_first(D));
}

// Channels first (N, C, spatial…), axis by axis (a bin is a box, so its mean is the mean over one axis of the
// means over the others): per bin a Slice and a pool over the bin's length on that axis (1 on the others),
// concatenated along the axis. Pools rather than ReduceMean/ReduceMax: OpenCV 4.6 keeps their ranks wrong.
template <size_t D>
std::string AdaptivePooling<D>::export_bins(io::OnnxGraph& g, std::string x) const {
  using detail::onnx_name;
  const char* op = max_ ? "MaxPool" : "AveragePool";
  for (size_t k = 0; k < D; ++k) {
    const int64_t axis = static_cast<int64_t>(k) + 2, length = input_shape()[k], out = (*options.output_size())[k];
    std::vector<std::string> bins;
    for (int64_t i = 0; i < out; ++i) {
      const auto [start, end] = adaptive_bin(i, length, out);
      const std::string hint = onnx_name(*this, "axis" + std::to_string(axis) + "_bin" + std::to_string(i));
      std::string part = g.add_node("Slice",
                                    {x, g.add_int64s(hint + "_start", {start}), g.add_int64s(hint + "_end", {end}),
                                     g.add_int64s(hint + "_axes", {axis})},
                                    {}, hint + "_Slice");
      if (end - start > 1) {
        std::vector<int64_t> kernel(D, 1);
        kernel[k] = end - start;
        part = g.add_node(op, {part}, {{"kernel_shape", kernel}, {"strides", std::vector<int64_t>(D, 1)}}, hint);
      }
      bins.push_back(part);
    }
    x = bins.size() == 1
            ? bins[0]
            : g.add_node("Concat", bins, {{"axis", axis}}, onnx_name(*this, "axis" + std::to_string(axis)));
  }
  return x;
}

template <size_t D>
std::string AdaptivePooling<D>::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  std::vector<int64_t> kernel;
  bool even = true;
  for (size_t k = 0; k < D; ++k) {
    const int64_t length = input_shape()[k], out = (*options.output_size())[k];
    even = even && length % out == 0;
    kernel.push_back(length / out);
  }
  const std::string x =
      D == 2 ? in[0]
             : g.add_node("Transpose", {in[0]}, {{"perm", to_channels_first(D)}}, onnx_name(*this, "channels_first"));
  const char* op = max_ ? "MaxPool" : "AveragePool";
  const std::string y = even
                            ? g.add_node(op, {x}, {{"kernel_shape", kernel}, {"strides", kernel}}, onnx_name(*this, op))
                            : export_bins(g, x);
  return D == 2 ? y
                : g.add_node("Transpose", {y}, {{"perm", from_channels_first(D)}}, onnx_name(*this, "channels_last"));
}

template class AdaptivePooling<1>;
template class AdaptivePooling<2>;
template class AdaptivePooling<3>;

TORCHFIT_REGISTER_LAYER(AdaptiveAveragePooling1D);
TORCHFIT_REGISTER_LAYER(AdaptiveMaxPooling1D);
TORCHFIT_REGISTER_LAYER(AdaptiveAveragePooling2D);
TORCHFIT_REGISTER_LAYER(AdaptiveMaxPooling2D);
TORCHFIT_REGISTER_LAYER(AdaptiveAveragePooling3D);
TORCHFIT_REGISTER_LAYER(AdaptiveMaxPooling3D);

}  // namespace torchfit
