#include <torchfit/layers/base_edges.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

EdgesLayer::EdgesLayer(const char* class_name, const std::string& name, std::vector<int64_t> edges,
                       std::string edges_text, bool crop)
    : Layer(class_name, name), edges_(std::move(edges)), edges_text_(std::move(edges_text)), crop_(crop) {}

Shape EdgesLayer::build_impl(const Shape& in) {
  const size_t rank = edges_.size() / 2;
  detail::expect_spatial_rank(describe(), in, rank);
  Shape out = in;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t change = edges_[2 * i] + edges_[2 * i + 1];
    out[i] += crop_ ? -change : change;
    if (out[i] <= 0) {
      throw ConfigError(describe() + ": cropping " + edges_text_ + " leaves nothing of the input " + format_shape(in));
    }
  }
  return out;
}

at::Tensor EdgesLayer::forward(const at::Tensor& x) {
  const size_t rank = edges_.size() / 2;
  const int64_t first = spatial_tensor_dim(rank);  // 2 for (N, C, H, W), else 1 (channels last)
  if (crop_) {
    at::Tensor y = x;  // from x's own sizes: a shared layer takes several
    for (size_t i = 0; i < rank; ++i) {
      const int64_t d = first + static_cast<int64_t>(i);
      y = y.narrow(d, edges_[2 * i], x.size(d) - edges_[2 * i] - edges_[2 * i + 1]);
    }
    return y;
  }
  std::vector<int64_t> last_dim_first;      // constant_pad_nd's order, from the last tensor dim
  if (first == 1) last_dim_first = {0, 0};  // the channels
  for (size_t i = rank; i-- > 0;) {
    last_dim_first.push_back(edges_[2 * i]);
    last_dim_first.push_back(edges_[2 * i + 1]);
  }
  return at::constant_pad_nd(x, last_dim_first, 0);
}

std::string EdgesLayer::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const size_t rank = edges_.size() / 2;
  const int64_t first = spatial_tensor_dim(rank);
  const size_t dims = rank + 2;
  if (!crop_) {
    std::vector<int64_t> pads(2 * dims, 0);  // begins, then ends, per tensor dim
    for (size_t i = 0; i < rank; ++i) {
      pads[first + i] = edges_[2 * i];
      pads[dims + first + i] = edges_[2 * i + 1];
    }
    return g.add_node("Pad", {in[0], g.add_int64s(onnx_name(*this, "pads"), pads)}, {{"mode", "constant"}},
                      onnx_name(*this, "Pad"));
  }
  std::vector<int64_t> starts, ends, axes;
  for (size_t i = 0; i < rank; ++i) {
    starts.push_back(edges_[2 * i]);
    ends.push_back(edges_[2 * i] + output_shape()[i]);
    axes.push_back(first + static_cast<int64_t>(i));
  }
  const std::vector<std::string> ins{in[0], g.add_int64s(onnx_name(*this, "starts"), starts),
                                     g.add_int64s(onnx_name(*this, "ends"), ends),
                                     g.add_int64s(onnx_name(*this, "axes"), axes)};
  return g.add_node("Slice", ins, {}, onnx_name(*this, "Slice"));
}

}  // namespace torchfit
