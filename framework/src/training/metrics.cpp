#include <torchfit/training/metrics.h>

#include <torchfit/error.h>

namespace torchfit {

std::string resolve_metric(const std::string& name, const std::string& loss) {
  if (name == "accuracy" || name == "acc") {
    if (loss == "sparse_categorical_crossentropy") return "sparse_categorical_accuracy";
    if (loss == "binary_crossentropy") return "binary_accuracy";
    return "categorical_accuracy";
  }
  if (name == "categorical_accuracy" || name == "sparse_categorical_accuracy" || name == "binary_accuracy" ||
      name == "top_k_categorical_accuracy") {
    return name;
  }
  throw ConfigError("unknown metric '" + name +
                    "' (known: accuracy, categorical_accuracy, sparse_categorical_accuracy, binary_accuracy, "
                    "top_k_categorical_accuracy)");
}

double metric_sum(const std::string& m, const at::Tensor& output, const at::Tensor& target, bool from_logits) {
  at::NoGradGuard no_grad;
  if (m == "categorical_accuracy") {
    return output.argmax(1).eq(target.argmax(1)).sum().item<double>();
  }
  if (m == "sparse_categorical_accuracy") {
    return output.argmax(1).eq(target.reshape({-1}).to(at::kLong)).sum().item<double>();
  }
  if (m == "binary_accuracy") {
    const double threshold = from_logits ? 0.0 : 0.5;
    auto pred = output.gt(threshold).to(at::kFloat).reshape({-1});
    auto y = target.to(at::kFloat).reshape({-1});
    return pred.eq(y).to(at::kFloat).sum().item<double>() * output.size(0) / static_cast<double>(pred.numel());
  }
  if (m == "top_k_categorical_accuracy") {
    const int64_t k = std::min<int64_t>(5, output.size(1));
    auto topk = std::get<1>(output.topk(k, 1));
    auto truth = target.argmax(1, true);
    return topk.eq(truth).any(1).sum().item<double>();
  }
  throw ConfigError("unknown metric '" + m + "'");
}

}  // namespace torchfit
