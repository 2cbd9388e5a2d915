#include <torchfit/layers/advanced_activations.h>

#include <torchfit/layers/registry.h>

#include <sstream>

#include "layers/layer_export.h"

namespace torchfit {
namespace {
void check_alpha(double alpha, const std::string& who) {
  if (!(alpha >= 0.0)) {
    std::ostringstream os;
    os << who << ": alpha must be >= 0, got " << alpha;
    throw ConfigError(os.str());
  }
}
}  // namespace

LeakyReLUImpl::LeakyReLUImpl(LeakyReLUOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  check_alpha(options.alpha(), describe());
}

at::Tensor LeakyReLUImpl::forward(const at::Tensor& x) { return at::leaky_relu(x, options.alpha()); }

nlohmann::json LeakyReLUImpl::config() const { return base_config(options); }

ELUImpl::ELUImpl(ELUOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  check_alpha(options.alpha(), describe());
}

at::Tensor ELUImpl::forward(const at::Tensor& x) { return at::elu(x, options.alpha()); }

nlohmann::json ELUImpl::config() const { return base_config(options); }

ReLUImpl::ReLUImpl(ReLUOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  auto check = [&](double v, const char* what) {
    if (!(v >= 0.0)) {
      std::ostringstream os;
      os << describe() << ": " << what << " must be >= 0, got " << v;
      throw ConfigError(os.str());
    }
  };
  if (options.max_value()) check(*options.max_value(), "max_value");
  check(options.negative_slope(), "negative_slope");
  check(options.threshold(), "threshold");
}

// keras.backend.relu, step by step.
at::Tensor ReLUImpl::forward(const at::Tensor& x) {
  const double slope = options.negative_slope(), threshold = options.threshold();
  const auto& max_value = options.max_value();
  if (slope != 0.0 && !max_value && threshold == 0.0) return at::leaky_relu(x, slope);
  at::Tensor y = threshold != 0.0 ? x * at::gt(x, threshold).to(x.scalar_type()) : at::relu(x);
  if (max_value) y = at::clamp(y, 0.0, *max_value);
  if (slope != 0.0) y = y - slope * at::relu(threshold - x);
  return y;
}

nlohmann::json ReLUImpl::config() const { return base_config(options); }

SoftmaxImpl::SoftmaxImpl(SoftmaxOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
}

Shape SoftmaxImpl::build_impl(const Shape& in) {
  tensor_axes_.clear();
  for (const int64_t k : resolve_keras_axes(options.axis(), in, describe())) {
    tensor_axes_.push_back(keras_to_tensor_axis(in, k));
  }
  return in;
}

at::Tensor SoftmaxImpl::forward(const at::Tensor& x) {
  if (tensor_axes_.size() == 1) return at::softmax(x, tensor_axes_[0]);
  return at::exp(x - at::logsumexp(x, tensor_axes_, /*keepdim=*/true));
}

nlohmann::json SoftmaxImpl::config() const { return base_config(options); }

TORCHFIT_REGISTER_LAYER(LeakyReLU);
TORCHFIT_REGISTER_LAYER(ReLU);
std::string LeakyReLUImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return g.add_node("LeakyRelu", {in[0]}, {{"alpha", options.alpha()}}, detail::onnx_name(*this, "LeakyRelu"));
}

std::string ELUImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return g.add_node("Elu", {in[0]}, {{"alpha", options.alpha()}}, detail::onnx_name(*this, "Elu"));
}

std::string SoftmaxImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  if (tensor_axes().size() != 1) {
    throw ConfigError("ONNX export: layer '" + name() + "' (Softmax): a softmax over several axes " +
                      nlohmann::json(options.axis()).dump() + " is not supported (ONNX Softmax takes one axis)");
  }
  return g.add_node("Softmax", {in[0]}, {{"axis", tensor_axes()[0]}}, detail::onnx_name(*this, "Softmax"));
}

namespace {

// min(y, m) = m − relu(m − y), from Mul/Add by constants and Relu: OpenCV 4.6 reads neither Clip with
// min/max inputs (opset ≥ 11) nor Min with a constant (one rounding of m − y: |error| ≤ ulp(m)).
std::string onnx_relu_cap(const Layer& l, io::OnnxGraph& g, const std::string& y, float max_value) {
  using detail::onnx_name;
  const std::string m = g.add_scalar(onnx_name(l, "max_value"), max_value),
                    minus = g.add_scalar(onnx_name(l, "minus_one"), -1.0f);
  const std::string room =
      g.add_node("Add", {g.add_node("Mul", {y, minus}, {}, onnx_name(l, "neg")), m}, {}, onnx_name(l, "room"));
  const std::string cut =
      g.add_node("Mul", {g.add_node("Relu", {room}, {}, onnx_name(l, "room_relu")), minus}, {}, onnx_name(l, "cut"));
  return g.add_node("Add", {cut, m}, {}, onnx_name(l, "capped"));
}

// y − slope · relu(threshold − x); threshold − x as −x + threshold (the same value; OpenCV 4.6 takes
// constants second).
std::string onnx_relu_negative_part(const Layer& l, io::OnnxGraph& g, const std::string& x, const std::string& y,
                                    double slope, double threshold) {
  using detail::onnx_name;
  const std::string neg_x =
      g.add_node("Mul", {x, g.add_scalar(onnx_name(l, "minus_one"), -1.0f)}, {}, onnx_name(l, "neg_x"));
  const std::string below =
      g.add_node("Add", {neg_x, g.add_scalar(onnx_name(l, "threshold"), threshold)}, {}, onnx_name(l, "below"));
  const std::string neg = g.add_node("Relu", {below}, {}, onnx_name(l, "below_relu"));
  const std::string scaled =
      g.add_node("Mul", {neg, g.add_scalar(onnx_name(l, "negative_slope"), slope)}, {}, onnx_name(l, "negative_part"));
  return g.add_node("Sub", {y, scaled}, {}, onnx_name(l, "ReLU"));
}

}  // namespace

std::string ReLUImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const double slope = options.negative_slope(), threshold = options.threshold();
  const auto& max_value = options.max_value();
  const std::string& x = in[0];
  if (slope != 0.0 && !max_value && threshold == 0.0) {
    return g.add_node("LeakyRelu", {x}, {{"alpha", slope}}, onnx_name(*this, "LeakyRelu"));
  }
  // The same steps as forward().
  std::string y;
  if (threshold != 0.0) {
    const std::string above = g.add_node("Greater", {x, g.add_scalar(onnx_name(*this, "threshold"), threshold)}, {},
                                         onnx_name(*this, "above_threshold"));
    const std::string mask = g.add_node("Cast", {above}, {{"to", int64_t{1}}}, onnx_name(*this, "mask"));
    y = g.add_node("Mul", {x, mask}, {}, onnx_name(*this, "thresholded"));
  } else {
    y = g.add_node("Relu", {x}, {}, onnx_name(*this, "Relu"));
  }
  if (max_value) y = onnx_relu_cap(*this, g, y, static_cast<float>(*max_value));
  if (slope != 0.0) y = onnx_relu_negative_part(*this, g, x, y, slope, threshold);
  return y;
}

TORCHFIT_REGISTER_LAYER(Softmax);
TORCHFIT_REGISTER_LAYER(ELU);

PReLUImpl::PReLUImpl(PReLUOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
}

// Keras: param_shape = input_shape[1:] with param_shape[i - 1] = 1 for each shared axis i.
Shape PReLUImpl::build_impl(const Shape& in) {
  Shape keras_shape = in;
  for (const int64_t a : options.shared_axes().value_or(Shape{})) {
    if (a < 1 || a > static_cast<int64_t>(in.size())) {
      throw ConfigError(describe() + ": shared_axes " + format_sizes(*options.shared_axes()) + ": " +
                        std::to_string(a) + " is not an axis of the input " + format_shape(in) + " (Keras axes 1.." +
                        std::to_string(in.size()) + ", batch excluded)");
    }
    keras_shape[static_cast<size_t>(a - 1)] = 1;
  }
  alpha = register_parameter("alpha", at::zeros(to_tensor_shape(keras_shape)));
  return in;
}

// keras.layers.PReLU: relu(x) − alpha · relu(−x).
at::Tensor PReLUImpl::forward(const at::Tensor& x) { return at::relu(x) - alpha * at::relu(-x); }

nlohmann::json PReLUImpl::config() const { return base_config(options); }

void PReLUImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::expect_keras_weight_count(describe(), weights, 1);
  detail::expect_keras_weight_dims(describe(), weights[0], alpha.dim(), "alpha");
  const at::Tensor w = alpha.dim() == 3 ? weights[0].permute({2, 0, 1}) : weights[0];  // (H, W, C) → (C, H, W)
  detail::assign_keras_weight(describe(), alpha, w, "alpha");
}

std::vector<at::Tensor> PReLUImpl::keras_weights_impl() const {
  return {detail::keras_weight_copy(alpha.dim() == 3 ? alpha.permute({1, 2, 0}) : alpha)};
}

// alpha (C, H, W) / (D) broadcasts (from the right) against (N, C, H, W) / (N, D). One alpha per channel
// ((C, 1, 1) or a vector's (D)): PRelu. Otherwise relu(x) + alpha·(x − relu(x)): OpenCV (4.6 and 4.10) reads
// PRelu's slope as one value per channel and gives wrong values for any other shape.
std::string PReLUImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const std::string a = g.add_initializer(onnx_name(*this, "alpha"), alpha);
  const bool per_channel = alpha.dim() == 1 || (alpha.dim() == 3 && alpha.size(1) == 1 && alpha.size(2) == 1);
  if (per_channel) return g.add_node("PRelu", {in[0], a}, {}, onnx_name(*this, "PRelu"));
  const std::string positive = g.add_node("Relu", {in[0]}, {}, onnx_name(*this, "positive"));
  const std::string negative = g.add_node("Sub", {in[0], positive}, {}, onnx_name(*this, "negative"));
  const std::string scaled = g.add_node("Mul", {negative, a}, {}, onnx_name(*this, "scaled"));
  return g.add_node("Add", {positive, scaled}, {}, onnx_name(*this, "PReLU"));
}

ThresholdedReLUImpl::ThresholdedReLUImpl(ThresholdedReLUOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (!(options.theta() >= 0.0)) {
    std::ostringstream os;
    os << describe() << ": theta must be >= 0, got " << options.theta();
    throw ConfigError(os.str());
  }
}

// tf.keras 2: inputs · cast(inputs > theta).
at::Tensor ThresholdedReLUImpl::forward(const at::Tensor& x) {
  return x * at::gt(x, options.theta()).to(x.scalar_type());
}

nlohmann::json ThresholdedReLUImpl::config() const { return base_config(options); }

std::string ThresholdedReLUImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return g.add_node("ThresholdedRelu", {in[0]}, {{"alpha", options.theta()}},
                    detail::onnx_name(*this, "ThresholdedRelu"));
}

TORCHFIT_REGISTER_LAYER(PReLU);
TORCHFIT_REGISTER_LAYER(ThresholdedReLU);

}  // namespace torchfit
