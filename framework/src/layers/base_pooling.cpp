#include <torchfit/layers/base_pooling.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

Pooling2DImpl::Pooling2DImpl(const char* class_name, Pooling2DOptions opts)
    : Layer(class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  strides_ = detail::pool_strides(describe(), *options.pool_size(), options.strides(), options.padding());
  options.strides(strides_);  // resolved (pool_size when unset), as Keras writes it in the config
}

Shape Pooling2DImpl::build_impl(const Shape& in) {
  const auto hw =
      detail::window_output_2d(describe(), "pool", in, *options.pool_size(), strides_, {1, 1}, options.padding(), pad_);
  return {hw[0], hw[1], in[2]};
}

std::vector<int64_t> Pooling2DImpl::pads_for(int64_t h, int64_t w) const {
  if (options.padding() != "same" || !built()) return pad_;  // during build: the size being built
  const Shape& in = input_shape();
  if (h == in[0] && w == in[1]) return pad_;
  std::vector<int64_t> pad;
  detail::window_output_2d(describe(), "pool", {h, w, in[2]}, *options.pool_size(), strides_, {1, 1}, "same", pad);
  return pad;
}

bool Pooling2DImpl::padded(const at::Tensor& x) const {
  const auto p = pads_for(x.size(2), x.size(3));
  return p[0] + p[1] + p[2] + p[3] > 0;
}

at::Tensor Pooling2DImpl::pad(const at::Tensor& x, double value) const {
  const auto p = pads_for(x.size(2), x.size(3));
  return at::constant_pad_nd(x, {p[2], p[3], p[0], p[1]}, value);
}

nlohmann::json Pooling2DImpl::config() const { return base_config(options); }

}  // namespace torchfit

namespace torchfit::detail {

std::string onnx_pooling_node(const Pooling2DImpl& l, io::OnnxGraph& g, const std::string& x, bool max) {
  std::vector<io::OnnxAttribute> attributes{{"kernel_shape", onnx_pair(*l.options.pool_size())},
                                            {"strides", *l.options.strides()},
                                            {"pads", onnx_pads(l.padding_edges())}};
  // Keras's "same" average counts only the real pixels of a window (ONNX's count_include_pad = 0).
  if (!max) attributes.emplace_back("count_include_pad", 0);
  return g.add_node(max ? "MaxPool" : "AveragePool", {x}, attributes, onnx_name(l, max ? "MaxPool" : "AveragePool"));
}

}  // namespace torchfit::detail
