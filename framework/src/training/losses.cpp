#include <torchfit/training/losses.h>

#include <torchfit/error.h>
#include <torchfit/layers/shape.h>

namespace torchfit {
namespace {
constexpr double kEpsilon = 1e-7;  // Keras backend epsilon

std::string shape_text(const at::Tensor& t) {
  std::string s = "(";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + ")";
}

void expect_same_shape(const std::string& loss, const at::Tensor& out, const at::Tensor& y) {
  if (out.sizes() != y.sizes()) {
    throw ConfigError(loss + ": target shape " + shape_text(y) + " does not match the model output " + shape_text(out) +
                      " (class_mode must fit the loss: categorical ⇒ one-hot (N, K))");
  }
}
}  // namespace

void check_loss(const std::string& name) {
  if (name != "categorical_crossentropy" && name != "sparse_categorical_crossentropy" &&
      name != "binary_crossentropy" && name != "mean_squared_error" && name != "mse") {
    throw ConfigError("unknown loss '" + name +
                      "' (known: categorical_crossentropy, sparse_categorical_crossentropy, "
                      "binary_crossentropy, mean_squared_error)");
  }
}

bool loss_uses_logits(const std::string& loss, const std::string& activation) {
  if (activation == "softmax") return loss == "categorical_crossentropy" || loss == "sparse_categorical_crossentropy";
  if (activation == "sigmoid") return loss == "binary_crossentropy";
  return false;
}

at::Tensor compute_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target, bool from_logits) {
  check_loss(name);
  if (name == "categorical_crossentropy") {
    expect_same_shape(name, output, target);
    at::Tensor logp = from_logits ? output.log_softmax(1) : output.clamp(kEpsilon, 1.0 - kEpsilon).log();
    return -(target * logp).sum(1).mean();
  }
  if (name == "sparse_categorical_crossentropy") {
    if (target.dim() != 1 || target.size(0) != output.size(0)) {
      throw ConfigError(name + ": target shape " + shape_text(target) + " must be (N) class indices for output " +
                        shape_text(output));
    }
    at::Tensor logp = from_logits ? output.log_softmax(1) : output.clamp(kEpsilon, 1.0 - kEpsilon).log();
    return at::nll_loss(logp, target.to(at::kLong));
  }
  if (name == "binary_crossentropy") {
    at::Tensor y = target.to(output.scalar_type()).reshape(output.sizes());
    if (from_logits) return at::binary_cross_entropy_with_logits(output, y);
    return at::binary_cross_entropy(output.clamp(kEpsilon, 1.0 - kEpsilon), y);
  }
  expect_same_shape(name, output, target);
  return (output - target).pow(2).mean();
}

}  // namespace torchfit
