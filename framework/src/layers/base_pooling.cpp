#include <torchfit/layers/base_pooling.h>

#include <limits>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

PoolingLayer::PoolingLayer(const char* class_name, const std::string& name, size_t rank, bool max)
    : Layer(class_name, name), rank_(rank), max_(max) {}

std::vector<int64_t> PoolingLayer::resolve(at::IntArrayRef pool, const std::optional<std::vector<int64_t>>& strides,
                                           const std::string& padding) {
  strides_ = detail::pool_strides(describe(), pool, strides, padding);
  pool_ = pool.vec();
  padding_ = padding;
  return strides_;
}

Shape PoolingLayer::build_impl(const Shape& in) {
  Shape out =
      detail::window_output_nd(describe(), "pool", in, pool_, strides_, std::vector<int64_t>(rank_, 1), padding_, pad_);
  out.push_back(in.back());
  inv_count_ = at::Tensor();
  std::vector<int64_t> ones_shape{1, 1};
  ones_shape.insert(ones_shape.end(), in.begin(), in.end() - 1);
  const at::Tensor ones = at::ones(ones_shape);
  // Real values per window: pool a padded mask of ones (constant, depends on the shape only).
  if (!max_ && padded(ones)) inv_count_ = pool(pad(ones, 0)).reciprocal();
  return out;
}

std::vector<int64_t> PoolingLayer::pads_for(at::IntArrayRef sizes) const {
  if (padding_ != "same" || !built()) return pad_;  // during build: the size being built
  const Shape& in = input_shape();
  if (std::equal(sizes.begin(), sizes.end(), in.begin())) return pad_;
  Shape other(sizes.begin(), sizes.end());
  other.push_back(in.back());
  std::vector<int64_t> pad;
  detail::window_output_nd(describe(), "pool", other, pool_, strides_, std::vector<int64_t>(rank_, 1), "same", pad);
  return pad;
}

at::Tensor PoolingLayer::channels_first(const at::Tensor& x) const {
  if (rank_ == 1) return x.transpose(1, 2);           // (N, steps, C) → (N, C, steps)
  if (rank_ == 3) return x.permute({0, 4, 1, 2, 3});  // (N, D, H, W, C) → (N, C, D, H, W)
  return x;
}

at::Tensor PoolingLayer::channels_last(const at::Tensor& y) const {
  if (rank_ == 1) return y.transpose(1, 2);
  if (rank_ == 3) return y.permute({0, 2, 3, 4, 1});
  return y;
}

bool PoolingLayer::padded(const at::Tensor& x) const {
  const auto p = pads_for(x.sizes().slice(2));
  return std::any_of(p.begin(), p.end(), [](int64_t v) { return v > 0; });
}

at::Tensor PoolingLayer::pad(const at::Tensor& x, double value) const {
  const auto p = pads_for(x.sizes().slice(2));
  std::vector<int64_t> last_axis_first;  // constant_pad_nd's order: the last axis first
  for (size_t i = rank_; i-- > 0;) {
    last_axis_first.push_back(p[2 * i]);
    last_axis_first.push_back(p[2 * i + 1]);
  }
  return at::constant_pad_nd(x, last_axis_first, value);
}

at::Tensor PoolingLayer::pool(const at::Tensor& x) const {
  if (max_) {
    if (rank_ == 1) return at::max_pool1d(x, pool_, strides_);
    return rank_ == 2 ? at::max_pool2d(x, pool_, strides_) : at::max_pool3d(x, pool_, strides_);
  }
  if (rank_ == 1) return at::avg_pool1d(x, pool_, strides_);
  return rank_ == 2 ? at::avg_pool2d(x, pool_, strides_) : at::avg_pool3d(x, pool_, strides_);
}

at::Tensor PoolingLayer::forward(const at::Tensor& x) {
  const at::Tensor c = channels_first(x);
  if (!padded(c)) return channels_last(pool(c));
  if (max_) return channels_last(pool(pad(c, -std::numeric_limits<float>::infinity())));
  at::Tensor inv_count = inv_count_;
  if (!inv_count.defined() || !std::equal(c.sizes().begin() + 2, c.sizes().end(), input_shape().begin())) {
    // Another input size (a shared layer, an input of unknown size): its own count of real values.
    std::vector<int64_t> ones_shape{1, 1};
    ones_shape.insert(ones_shape.end(), c.sizes().begin() + 2, c.sizes().end());
    const at::Tensor ones = at::ones(ones_shape);
    inv_count = pool(pad(ones, 0)).reciprocal();
  }
  // avg over the full window (padding counted as zeros) × window size / real values = mean of the real ones.
  return channels_last(pool(pad(c, 0)) * inv_count.to(x.device(), x.scalar_type()));
}

std::string PoolingLayer::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const Shape& i = input_shape();
  const Shape& o = output_shape();
  if (rank_ == 2) return detail::onnx_pooling_node(*this, g, in[0], pool_, strides_, detail::onnx_pads(pad_));
  if (rank_ == 1) {  // as a 1 × k 2-D pooling over (N, C, 1, steps), as Conv1D
    const std::string image = detail::onnx_sequence_as_image(*this, g, in[0], i[1]);
    const std::string y =
        detail::onnx_pooling_node(*this, g, image, {1, pool_[0]}, {1, strides_[0]}, {0, pad_[0], 0, pad_[1]});
    return detail::onnx_image_as_sequence(*this, g, y, o[1]);
  }
  const std::string x = g.add_node("Transpose", {in[0]}, {{"perm", std::vector<int64_t>{0, 4, 1, 2, 3}}},
                                   onnx_name(*this, "to_channels_first"));
  const std::string y = detail::onnx_pooling_node(*this, g, x, pool_, strides_, detail::onnx_pads(pad_));
  return g.add_node("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 2, 3, 4, 1}}},
                    onnx_name(*this, "to_channels_last"));
}

}  // namespace torchfit

namespace torchfit::detail {

std::string onnx_pooling_node(const PoolingLayer& l, io::OnnxGraph& g, const std::string& x, at::IntArrayRef window,
                              at::IntArrayRef strides, const std::vector<int64_t>& pads) {
  const bool max = l.is_max();
  std::vector<io::OnnxAttribute> attributes{{"kernel_shape", window.vec()}, {"strides", strides.vec()}, {"pads", pads}};
  // Keras's "same" average counts only the real pixels of a window (ONNX's count_include_pad = 0).
  if (!max) attributes.emplace_back("count_include_pad", 0);
  return g.add_node(max ? "MaxPool" : "AveragePool", {x}, attributes, onnx_name(l, max ? "MaxPool" : "AveragePool"));
}

}  // namespace torchfit::detail
