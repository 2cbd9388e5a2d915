#include <torchfit/layers/group_normalization.h>

#include <torchfit/layers/registry.h>
#include <torchfit/layers/shape.h>

#include "layers/layer_export.h"
#include "layers/normalized_axes.h"

namespace torchfit {

GroupNormalizationImpl::GroupNormalizationImpl(GroupNormalizationOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  detail::check_epsilon(describe(), options.epsilon());
  if (options.groups() == 0 || options.groups() < -1) {
    throw ConfigError(describe() + ": groups must be >= 1 (or -1: one group per channel), got " +
                      std::to_string(options.groups()));
  }
}

Shape GroupNormalizationImpl::build_impl(const Shape& in) {
  tensor_axis_ = keras_to_tensor_axis(in, options.axis());
  if (tensor_axis_ < 0) {
    throw ConfigError(describe() + ": axis " + std::to_string(options.axis()) +
                      " is the batch axis or outside the input " + format_shape(in));
  }
  const Shape per_sample = to_tensor_shape(in);
  const int64_t channels = per_sample[static_cast<size_t>(tensor_axis_ - 1)];
  groups_ = options.groups() == -1 ? channels : options.groups();
  if (groups_ > channels || channels % groups_ != 0) {
    throw ConfigError(describe() + ": groups " + std::to_string(groups_) + " must divide the " +
                      std::to_string(channels) + " channels of axis " + std::to_string(options.axis()) +
                      " of the input " + format_shape(in) + " (and be no more than them)");
  }
  channels_first_ = per_sample;
  channels_first_.erase(channels_first_.begin() + (tensor_axis_ - 1));
  channels_first_.insert(channels_first_.begin(), channels);
  if (options.scale()) gamma = register_parameter("gamma", at::ones({channels}));
  if (options.center()) beta = register_parameter("beta", at::zeros({channels}));
  return in;
}

at::Tensor GroupNormalizationImpl::forward(const at::Tensor& input) {
  const bool low = input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16;
  const at::Tensor x = low ? input.to(at::kFloat) : input;
  const at::Tensor moved = tensor_axis_ == 1 ? x : x.movedim(tensor_axis_, 1);
  // LibTorch's group_norm: per sample and group, mean and biased variance over the group's channels and
  // every other axis — Keras's group_reduction_axes.
  at::Tensor y = at::group_norm(moved, groups_, gamma, beta, options.epsilon());
  if (tensor_axis_ != 1) y = y.movedim(1, tensor_axis_);
  return low ? y.to(input.scalar_type()) : y;
}

void GroupNormalizationImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::set_gamma_and_beta(describe(), gamma, beta, weights);
}

std::vector<at::Tensor> GroupNormalizationImpl::keras_weights_impl() const {
  return detail::gamma_and_beta_to_keras(gamma, beta);
}

namespace {

// The permutation moving tensor axis `from` of a rank-`rank` tensor to axis 1 (its inverse when `back`).
std::vector<int64_t> channels_first_perm(int64_t from, int64_t rank, bool back) {
  std::vector<int64_t> perm{0};
  for (int64_t d = 1; d < rank; ++d)
    if (d != from) perm.push_back(d);
  perm.insert(perm.begin() + 1, from);
  if (!back) return perm;
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inverse;
}

}  // namespace

std::string GroupNormalizationImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const auto rank = static_cast<int64_t>(channels_first_.size()) + 1;
  std::string x = in[0];
  if (tensor_axis_ != 1) {
    x = g.add_node("Transpose", {x}, {{"perm", channels_first_perm(tensor_axis_, rank, false)}},
                   onnx_name(*this, "to_channels_first"));
  }
  const std::string grouped =
      g.add_node("Reshape", {x, g.add_int64s(onnx_name(*this, "groups_shape"), {0, groups_, -1})}, {},
                 onnx_name(*this, "grouped"));
  const std::string normalized =
      g.add_node("InstanceNormalization",
                 {grouped, g.add_initializer(onnx_name(*this, "ones"), at::ones({groups_})),
                  g.add_initializer(onnx_name(*this, "zeros"), at::zeros({groups_}))},
                 {{"epsilon", options.epsilon()}}, onnx_name(*this, "InstanceNormalization"));
  std::vector<int64_t> shape{0};
  shape.insert(shape.end(), channels_first_.begin(), channels_first_.end());
  std::string y = g.add_node("Reshape", {normalized, g.add_int64s(onnx_name(*this, "shape"), shape)}, {},
                             onnx_name(*this, "ungrouped"));
  std::vector<int64_t> view(static_cast<size_t>(rank) - 1, 1);
  view[0] = channels_first_[0];  // (C, 1, …): per channel, against (N, C, …)
  if (gamma.defined())
    y = g.add_node("Mul", {y, g.add_initializer(onnx_name(*this, "gamma"), gamma.reshape(view))}, {},
                   onnx_name(*this, "scaled"));
  if (beta.defined())
    y = g.add_node("Add", {y, g.add_initializer(onnx_name(*this, "beta"), beta.reshape(view))}, {},
                   onnx_name(*this, "shifted"));
  if (tensor_axis_ == 1) return y;
  return g.add_node("Transpose", {y}, {{"perm", channels_first_perm(tensor_axis_, rank, true)}},
                    onnx_name(*this, "from_channels_first"));
}

TORCHFIT_REGISTER_LAYER(GroupNormalization);

}  // namespace torchfit
