#include <torchfit/layers/layer_normalization.h>

#include <algorithm>
#include <sstream>

#include <torchfit/layers/registry.h>

namespace torchfit {

LayerNormalizationImpl::LayerNormalizationImpl(LayerNormalizationOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (!(options.epsilon() > 0.0)) {
    std::ostringstream os;
    os << describe() << ": epsilon must be > 0, got " << options.epsilon();
    throw ConfigError(os.str());
  }
  if (options.axis().axes.empty()) throw ConfigError(describe() + ": axis must name at least one axis");
}

Shape LayerNormalizationImpl::build_impl(const Shape& in) {
  // Keras axes (batch = 0), sorted: the parameters' shape lists their sizes in this order.
  std::vector<int64_t> keras_axes;
  const auto rank = static_cast<int64_t>(in.size()) + 1;
  tensor_axes_.clear();
  for (int64_t a : options.axis().axes) {
    const int64_t t = keras_to_tensor_axis(in, a);
    const int64_t k = a < 0 ? a + rank : a;
    if (t < 0 || std::count(keras_axes.begin(), keras_axes.end(), k)) {
      throw ConfigError(describe() + ": axis " + std::to_string(a) +
                        " is the batch axis, repeated or outside the input " + format_shape(in));
    }
    keras_axes.push_back(k);
    tensor_axes_.push_back(t);
  }
  std::sort(keras_axes.begin(), keras_axes.end());
  std::vector<int64_t> param_shape;
  param_view_.assign(static_cast<size_t>(rank), 1);
  for (int64_t k : keras_axes) {
    param_shape.push_back(in[static_cast<size_t>(k - 1)]);
    param_view_[static_cast<size_t>(k)] = in[static_cast<size_t>(k - 1)];
  }
  if (options.scale()) gamma = register_parameter("gamma", at::ones(param_shape));
  if (options.center()) beta = register_parameter("beta", at::zeros(param_shape));
  return in;
}

at::Tensor LayerNormalizationImpl::forward(const at::Tensor& input) {
  const bool low = input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16;
  const at::Tensor x = low ? input.to(at::kFloat) : input;
  const at::Tensor mean = x.mean(tensor_axes_, /*keepdim=*/true);
  const at::Tensor centred = x - mean;
  const at::Tensor var = (centred * centred).mean(tensor_axes_, /*keepdim=*/true);
  at::Tensor y = centred * at::rsqrt(var + options.epsilon());
  // gamma/beta in Keras order → a Keras-rank view → the tensor's axis order.
  auto as_tensor = [&](const at::Tensor& p) {
    at::Tensor v = p.reshape(param_view_);
    return v.dim() == 4 ? v.permute({0, 3, 1, 2}) : v;
  };
  if (gamma.defined()) y = y * as_tensor(gamma);
  if (beta.defined()) y = y + as_tensor(beta);
  return low ? y.to(input.scalar_type()) : y;
}

TORCHFIT_REGISTER_LAYER(LayerNormalization);

}  // namespace torchfit
