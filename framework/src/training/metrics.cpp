#include <torchfit/training/metrics.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <torchfit/error.h>
#include <torchfit/training/losses.h>

#include "training/keras_metric.h"

namespace torchfit {

std::vector<double> auc_thresholds() {
  std::vector<double> t = {-1e-7};
  for (int64_t i = 0; i < 198; ++i) t.push_back(static_cast<double>(i + 1) / 199.0);
  t.push_back(1.0 + 1e-7);
  return t;
}

namespace {
// The cross-entropy family of a loss as metrics read it: "binary_crossentropy" for the binary (focal) ones,
// "sparse_categorical_crossentropy", else the loss's Keras function name (any spelling Loss::parse reads).
std::string loss_family(const std::string& loss) {
  try {
    const Loss l = Loss::parse(loss);
    if (l.class_name == "BinaryCrossentropy" || l.class_name == "BinaryFocalCrossentropy") return "binary_crossentropy";
    return l.keras_name();
  } catch (const ConfigError&) {
    return loss;
  }
}
}  // namespace

std::vector<std::string> metric_names() { return metric::metric_names(); }

std::string resolve_metric(const std::string& name, const std::string& loss) {
  const metric::Spec s = metric::parse_metric(name, metric::Context{loss_family(loss), 1});
  if (name == "accuracy" || name == "acc") {
    static const std::map<std::string, std::string> keras = {
        {"BinaryAccuracy", "binary_accuracy"},
        {"CategoricalAccuracy", "categorical_accuracy"},
        {"SparseCategoricalAccuracy", "sparse_categorical_accuracy"}};
    return keras.at(s.class_name);
  }
  return s.log_name;
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
  throw ConfigError("metric '" + m + "' is not one of the accuracies (use MetricSet)");
}

MetricSet::MetricSet(const std::vector<std::string>& names, const std::string& loss, bool from_logits, int64_t outputs)
    : loss_(loss_family(loss)), from_logits_(from_logits), outputs_(std::max<int64_t>(1, outputs)) {
  const metric::Context context{loss_, outputs_};
  std::set<std::string> seen;
  for (const auto& n : names) {
    const metric::Spec spec = metric::parse_metric(n, context);
    // Two columns of one name in the logs would overwrite each other.
    if (!seen.insert(spec.log_name).second) throw ConfigError("metric '" + spec.log_name + "' is named twice");
    if (spec.log_name == "loss" || spec.log_name.rfind("val_", 0) == 0) {
      throw ConfigError("metric '" + spec.log_name + "': the name is fit's own (\"loss\" and \"val_…\" are the loss " +
                        "and the validation values); give the metric another name");
    }
    Entry e{spec.log_name, metric::build_metric(spec, context), size_, 1};
    size_ += e.metric->state_size();
    const std::vector<double> zeros(e.metric->state_size(), 0.0);
    e.values = e.metric->result(zeros.data()).size();  // known from the options and the outputs
    if (e.values == 0) throw ConfigError("metric '" + e.name + "': its result has no value");
    for (size_t i = 0; i < e.values; ++i) {
      const std::string column = e.values == 1 ? e.name : e.name + "_" + std::to_string(i);
      if (e.values > 1 && !seen.insert(column).second) throw ConfigError("metric '" + column + "' is named twice");
      columns_.push_back(column);
    }
    entries_.push_back(std::move(e));
  }
}

void MetricSet::update(const at::Tensor& output, const at::Tensor& target, std::vector<double>& state,
                       const at::Tensor& sample_weight) const {
  at::NoGradGuard no_grad;
  if (state.size() != size_) state.assign(size_, 0.0);
  if (entries_.empty()) return;
  const metric::Batch batch(output.detach(), target.detach(), from_logits_, metric::Context{loss_, outputs_},
                            sample_weight.defined() ? sample_weight.detach() : sample_weight);
  for (const Entry& e : entries_) e.metric->update(batch, state.data() + e.offset);
}

Logs MetricSet::results(const std::vector<double>& state, const std::string& prefix) const {
  Logs out;
  const double none = std::numeric_limits<double>::quiet_NaN();
  size_t column = 0;
  for (const Entry& e : entries_) {
    std::vector<double> v =
        state.size() == size_ ? e.metric->result(state.data() + e.offset) : std::vector<double>(e.values, none);
    if (v.size() != e.values) {
      throw ConfigError("metric '" + e.name + "': its result has " + std::to_string(v.size()) + " value(s), " +
                        std::to_string(e.values) + " before any update (the number must not change)");
    }
    for (size_t i = 0; i < e.values; ++i) out[prefix + columns_[column++]] = v[i];
  }
  return out;
}

}  // namespace torchfit
