#include <torchfit/layers/permute.h>

#include <algorithm>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {
namespace {

// Tensor axis of Keras axis k (0 = batch) for a tensor of `rank` per-sample axes: an image's (H, W, C)
// are the tensor's dims 2, 3, 1; other ranks are in Keras's order already.
int64_t tensor_axis_of(int64_t k, size_t rank) {
  if (rank != 3 || k == 0) return k;
  return k == 3 ? 1 : k + 1;
}

}  // namespace

PermuteImpl::PermuteImpl(PermuteOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.dims().empty()) throw ConfigError(describe() + ": dims must name the axes to permute, got ()");
}

// Keras: output axis i (1-based) is input axis dims[i-1]. In tensor terms, output tensor dim j holds Keras
// output axis k_out(j), which is input Keras axis dims[k_out(j) - 1], i.e. input tensor dim of that.
Shape PermuteImpl::build_impl(const Shape& in) {
  Shape sorted = options.dims();
  std::sort(sorted.begin(), sorted.end());
  bool ok = sorted.size() == in.size();
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i) + 1;
  if (!ok) {
    throw ConfigError(describe() + ": dims " + format_sizes(options.dims()) + " is not a permutation of 1.." +
                      std::to_string(in.size()) + " for the input " + format_shape(in));
  }
  Shape out;
  for (int64_t d : options.dims()) out.push_back(in[static_cast<size_t>(d - 1)]);
  const size_t rank = in.size();
  tensor_perm_.assign(rank + 1, 0);
  for (size_t j = 1; j <= rank; ++j) {
    // Keras output axis held by output tensor dim j (the inverse of tensor_axis_of).
    int64_t k_out = static_cast<int64_t>(j);
    if (rank == 3) k_out = j == 1 ? 3 : static_cast<int64_t>(j) - 1;
    tensor_perm_[j] = tensor_axis_of(options.dims()[static_cast<size_t>(k_out - 1)], rank);
  }
  return out;
}

at::Tensor PermuteImpl::forward(const at::Tensor& x) { return x.permute(tensor_perm_); }

nlohmann::json PermuteImpl::config() const { return base_config(options); }

std::string PermuteImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return g.add_node("Transpose", {in[0]}, {{"perm", tensor_perm_}}, detail::onnx_name(*this, "Transpose"));
}

TORCHFIT_REGISTER_LAYER(Permute);

}  // namespace torchfit
