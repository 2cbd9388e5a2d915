#include <torchfit/training/losses.h>

#include <torchfit/error.h>
#include <torchfit/layers/shape.h>

namespace torchfit {
namespace {
constexpr double kEpsilon = 1e-7;  // Keras backend epsilon

std::string shape_text(const at::Tensor& t) { return format_sizes(t.sizes().vec()); }

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

namespace {

// Keras 2.x backend.categorical_crossentropy on probabilities: outputs divided by their sum, clipped to
// [eps, 1 - eps], then -sum(target * log(p)).
at::Tensor categorical_from_probabilities(const at::Tensor& output, const at::Tensor& target) {
  const at::Tensor p = (output / output.sum(1, true)).clamp(kEpsilon, 1.0 - kEpsilon);
  return -(target * p.log()).sum(1).mean();
}

// Keras 2.x backend.sparse_categorical_crossentropy on probabilities: clipped to [eps, 1 - eps], then the
// log fed to softmax cross-entropy — i.e. -log(p_y / sum(p)) of the clipped outputs.
at::Tensor sparse_from_probabilities(const at::Tensor& output, const at::Tensor& target) {
  const at::Tensor logp = output.clamp(kEpsilon, 1.0 - kEpsilon).log();
  return at::nll_loss(logp.log_softmax(1), target.to(at::kLong));
}

// Keras 2.x backend.binary_crossentropy on probabilities: clipped to [eps, 1 - eps], then
// -(y log(p + eps) + (1 - y) log(1 - p + eps)), the mean over the last axis and the batch.
at::Tensor binary_from_probabilities(const at::Tensor& output, const at::Tensor& y) {
  const at::Tensor p = output.clamp(kEpsilon, 1.0 - kEpsilon);
  return -(y * (p + kEpsilon).log() + (1.0 - y) * (1.0 - p + kEpsilon).log()).mean();
}

}  // namespace

at::Tensor compute_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target, bool from_logits) {
  check_loss(name);
  if (name == "categorical_crossentropy") {
    expect_same_shape(name, output, target);
    if (!from_logits) return categorical_from_probabilities(output, target);
    return -(target * output.log_softmax(1)).sum(1).mean();
  }
  if (name == "sparse_categorical_crossentropy") {
    if (target.dim() != 1 || target.size(0) != output.size(0)) {
      throw ConfigError(name + ": target shape " + shape_text(target) + " must be (N) class indices for output " +
                        shape_text(output));
    }
    if (!from_logits) return sparse_from_probabilities(output, target);
    return at::nll_loss(output.log_softmax(1), target.to(at::kLong));
  }
  if (name == "binary_crossentropy") {
    at::Tensor y = target.to(output.scalar_type()).reshape(output.sizes());
    if (from_logits) return at::binary_cross_entropy_with_logits(output, y);
    return binary_from_probabilities(output, y);
  }
  expect_same_shape(name, output, target);
  return (output - target).pow(2).mean();
}

namespace {

// Each sample's loss (N), the formulas of compute_loss before the batch mean.
at::Tensor per_sample_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target,
                           bool from_logits) {
  const int64_t n = output.size(0);
  if (name == "categorical_crossentropy") {
    expect_same_shape(name, output, target);
    if (from_logits) return -(target * output.log_softmax(1)).sum(1);
    const at::Tensor p = (output / output.sum(1, true)).clamp(kEpsilon, 1.0 - kEpsilon);
    return -(target * p.log()).sum(1);
  }
  if (name == "sparse_categorical_crossentropy") {
    const at::Tensor logp =
        from_logits ? output.log_softmax(1) : output.clamp(kEpsilon, 1.0 - kEpsilon).log().log_softmax(1);
    return at::nll_loss(logp, target.to(at::kLong), {}, at::Reduction::None);
  }
  if (name == "binary_crossentropy") {
    const at::Tensor y = target.to(output.scalar_type()).reshape(output.sizes());
    at::Tensor l;
    if (from_logits) {
      l = at::binary_cross_entropy_with_logits(output, y, {}, {}, at::Reduction::None);
    } else {
      const at::Tensor p = output.clamp(kEpsilon, 1.0 - kEpsilon);
      l = -(y * (p + kEpsilon).log() + (1.0 - y) * (1.0 - p + kEpsilon).log());
    }
    return l.reshape({n, -1}).mean(1);
  }
  expect_same_shape(name, output, target);
  return (output - target).pow(2).reshape({n, -1}).mean(1);
}

// The class of each sample, for its class weight.
at::Tensor sample_classes(const std::string& name, const at::Tensor& target) {
  if (name == "sparse_categorical_crossentropy") return target.reshape({-1}).to(at::kLong);
  if (name == "binary_crossentropy" || target.dim() == 1)
    return target.reshape({target.size(0), -1}).select(1, 0).round().to(at::kLong);
  return target.argmax(1);
}

}  // namespace

at::Tensor compute_weighted_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target,
                                 bool from_logits, const at::Tensor& class_weight) {
  check_loss(name);
  const at::Tensor classes = sample_classes(name, target);
  const int64_t k = class_weight.numel();
  if (classes.numel() > 0 && (classes.min().item<int64_t>() < 0 || classes.max().item<int64_t>() >= k)) {
    throw ConfigError("class_weight: a target's class " + std::to_string(classes.max().item<int64_t>()) +
                      " has no weight (" + std::to_string(k) + " weights)");
  }
  const at::Tensor w = class_weight.to(output.device(), output.scalar_type()).index_select(0, classes);
  const at::Tensor losses = per_sample_loss(name == "mse" ? "mean_squared_error" : name, output, target, from_logits);
  return (losses * w).sum() / static_cast<double>(std::max<int64_t>(output.size(0), 1));
}

}  // namespace torchfit
