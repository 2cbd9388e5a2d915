#include <torchfit/training/metrics.h>

#include <cmath>
#include <limits>
#include <set>

#include <torchfit/error.h>
#include <torchfit/training/losses.h>

namespace torchfit {
namespace {

constexpr int64_t kAucThresholds = 200;  // Keras AUC(num_thresholds=200)
constexpr double kMetricEpsilon = 1e-7;  // Keras backend epsilon

bool is_accuracy(const std::string& m) {
  return m == "categorical_accuracy" || m == "sparse_categorical_accuracy" || m == "binary_accuracy" ||
         m == "top_k_categorical_accuracy";
}

size_t state_size_of(const std::string& m, int64_t outputs) {
  if (m == "auc") return 4 * kAucThresholds;
  if (m == "f1_score") return 3 * static_cast<size_t>(outputs);
  return 2;
}

double divide_no_nan(double a, double b) { return b == 0 ? 0.0 : a / b; }

// Keras AUC.result() for the ROC curve with "interpolation": trapezoids over (fpr, tpr) at the thresholds.
double auc_result(const double* s) {
  const double *tp = s, *fp = s + kAucThresholds, *tn = s + 2 * kAucThresholds, *fn = s + 3 * kAucThresholds;
  double area = 0;
  for (int64_t i = 0; i + 1 < kAucThresholds; ++i) {
    const double x0 = divide_no_nan(fp[i], fp[i] + tn[i]), x1 = divide_no_nan(fp[i + 1], fp[i + 1] + tn[i + 1]);
    const double y0 = divide_no_nan(tp[i], tp[i] + fn[i]), y1 = divide_no_nan(tp[i + 1], tp[i + 1] + fn[i + 1]);
    area += (x0 - x1) * (y0 + y1) / 2.0;
  }
  return area;
}

// Keras F1Score(average="macro").result().
double f1_result(const double* s, int64_t k) {
  double sum = 0;
  for (int64_t c = 0; c < k; ++c) {
    const double tp = s[c], fp = s[k + c], fn = s[2 * k + c];
    const double p = tp / (tp + fp + kMetricEpsilon), r = tp / (tp + fn + kMetricEpsilon);
    sum += 2.0 * p * r / (p + r + kMetricEpsilon);
  }
  return sum / static_cast<double>(k);
}

// tp, fp, tn, fn of `p > threshold` at each AUC threshold, from one pass: a prediction exceeds the
// thresholds below its searchsorted index.
void add_auc_counts(const at::Tensor& p, const at::Tensor& y, double* s) {
  const auto thresholds = auc_thresholds();
  const at::Tensor thr = at::tensor(thresholds, at::kDouble).to(at::kFloat).to(p.device());
  const at::Tensor idx = at::searchsorted(thr, p.to(at::kFloat).contiguous());  // # thresholds < p
  const at::Tensor pos = y.gt(0.5);
  auto hist = [&](const at::Tensor& mask) {
    return at::bincount(idx.masked_select(mask), {}, kAucThresholds + 1).to(at::kDouble).cpu();
  };
  const at::Tensor hp = hist(pos), hn = hist(pos.logical_not());
  const double* a = hp.data_ptr<double>();
  const double* b = hn.data_ptr<double>();
  double above_pos = 0, above_neg = 0;  // samples with index > j: predicted positive at threshold j
  const double total_pos = hp.sum().item<double>(), total_neg = hn.sum().item<double>();
  for (int64_t j = kAucThresholds - 1; j >= 0; --j) {
    above_pos += a[j + 1];
    above_neg += b[j + 1];
    s[j] += above_pos;                                   // tp
    s[kAucThresholds + j] += above_neg;                  // fp
    s[2 * kAucThresholds + j] += total_neg - above_neg;  // tn
    s[3 * kAucThresholds + j] += total_pos - above_pos;  // fn
  }
}

}  // namespace

std::vector<double> auc_thresholds() {
  std::vector<double> t = {0.0 - kMetricEpsilon};
  for (int64_t i = 0; i < kAucThresholds - 2; ++i) t.push_back(static_cast<double>(i + 1) / (kAucThresholds - 1));
  t.push_back(1.0 + kMetricEpsilon);
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

std::string resolve_metric(const std::string& name, const std::string& given_loss) {
  const std::string loss = loss_family(given_loss);
  if (name == "accuracy" || name == "acc") {
    if (loss == "sparse_categorical_crossentropy") return "sparse_categorical_accuracy";
    if (loss == "binary_crossentropy") return "binary_accuracy";
    return "categorical_accuracy";
  }
  if (is_accuracy(name) || name == "precision" || name == "recall" || name == "auc" || name == "f1_score") {
    return name;
  }
  throw ConfigError("unknown metric '" + name +
                    "' (known: accuracy, categorical_accuracy, sparse_categorical_accuracy, binary_accuracy, "
                    "top_k_categorical_accuracy, precision, recall, auc, f1_score)");
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
  throw ConfigError("metric '" + m + "' is not a per-sample mean (use MetricSet)");
}

MetricSet::MetricSet(const std::vector<std::string>& names, const std::string& loss, bool from_logits, int64_t outputs)
    : names_(names), loss_(loss_family(loss)), from_logits_(from_logits), outputs_(std::max<int64_t>(1, outputs)) {
  std::set<std::string> seen;
  for (const auto& n : names_) {
    // Two columns of one name in the logs would overwrite each other.
    if (!seen.insert(n).second) throw ConfigError("metric '" + n + "' is named twice");
    resolved_.push_back(resolve_metric(n, loss));
    offsets_.push_back(size_);
    size_ += state_size_of(resolved_.back(), outputs_);
  }
}

at::Tensor MetricSet::probabilities(const at::Tensor& output) const {
  const at::Tensor out = output.to(at::kFloat);
  if (!from_logits_) return out;
  return loss_ == "binary_crossentropy" ? out.sigmoid() : out.softmax(1);
}

at::Tensor MetricSet::one_hot(const at::Tensor& target) const {
  if (target.dim() == 1 && loss_ == "sparse_categorical_crossentropy") {
    return at::one_hot(target.to(at::kLong), outputs_).to(at::kFloat);
  }
  return target.to(at::kFloat);
}

void MetricSet::update(const at::Tensor& output, const at::Tensor& target, std::vector<double>& state) const {
  at::NoGradGuard no_grad;
  if (state.size() != size_) state.assign(size_, 0.0);
  const int64_t n = output.size(0);
  at::Tensor p, y;  // probabilities and one-hot targets, for the confusion-based metrics
  for (size_t i = 0; i < resolved_.size(); ++i) {
    const std::string& m = resolved_[i];
    double* s = state.data() + offsets_[i];
    if (is_accuracy(m)) {
      s[0] += metric_sum(m, output, target, from_logits_);
      s[1] += static_cast<double>(n);
      continue;
    }
    if (!p.defined()) {
      p = probabilities(output).reshape({n, -1});
      y = one_hot(target).reshape({n, -1});
    }
    const at::Tensor pred = p.gt(0.5), truth = y.gt(0.5);
    if (m == "precision" || m == "recall") {
      s[0] += (pred & truth).sum().item<double>();
      s[1] += (m == "precision" ? (pred & truth.logical_not()) : (pred.logical_not() & truth)).sum().item<double>();
    } else if (m == "auc") {
      add_auc_counts(p.reshape({-1}), y.reshape({-1}), s);
    } else {  // f1_score
      const at::Tensor hot = p.size(1) == 1 ? pred : at::one_hot(p.argmax(1), p.size(1)).gt(0);
      const at::Tensor tp = (hot & truth).sum(0).to(at::kDouble).cpu();
      const at::Tensor fp = (hot & truth.logical_not()).sum(0).to(at::kDouble).cpu();
      const at::Tensor fn = (hot.logical_not() & truth).sum(0).to(at::kDouble).cpu();
      const int64_t k = outputs_;
      for (int64_t c = 0; c < std::min<int64_t>(k, tp.numel()); ++c) {
        s[c] += tp[c].item<double>();
        s[k + c] += fp[c].item<double>();
        s[2 * k + c] += fn[c].item<double>();
      }
    }
  }
}

Logs MetricSet::results(const std::vector<double>& state, const std::string& prefix) const {
  Logs out;
  const double none = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < resolved_.size(); ++i) {
    const std::string& m = resolved_[i];
    const double* s = state.data() + offsets_[i];
    double v;
    if (state.size() != size_) {
      v = none;
    } else if (is_accuracy(m)) {
      v = s[1] > 0 ? s[0] / s[1] : none;
    } else if (m == "precision" || m == "recall") {
      v = divide_no_nan(s[0], s[0] + s[1]);
    } else if (m == "auc") {
      v = auc_result(s);
    } else {
      v = f1_result(s, outputs_);
    }
    out[prefix + names_[i]] = v;
  }
  return out;
}

}  // namespace torchfit
