// The catalogue of Keras 3's metrics (keras/src/metrics/__init__.py): names, default log names, the
// arguments each class takes, and the family that computes it; the option reader and the batch views the
// families share.
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <utility>

#include <torchfit/layers/keras_object.h>
#include <torchfit/layers/shape.h>
#include <torchfit/training/custom_objects.h>

#include "training/keras_metric.h"

namespace torchfit::metric {

// ---- Options ----

Options::Options(std::string class_name, Json config)
    : class_name_(std::move(class_name)), config_(std::move(config)) {}

ConfigError Options::error(const std::string& what) const { return ConfigError("metric " + class_name_ + ": " + what); }

double Options::number(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  if (!config_[key].is_number()) throw error(std::string(key) + " must be a number, got " + config_[key].dump());
  return config_[key].get<double>();
}

double Options::number_in(const char* key, double fallback, double lo, double hi) const {
  const double v = number(key, fallback);
  if (!(v >= lo && v <= hi)) {
    throw error(std::string(key) + " must lie in [" + Json(lo).dump() + ", " + Json(hi).dump() + "], got " +
                config_[key].dump());
  }
  return v;
}

int64_t Options::integer(const char* key, int64_t fallback) const {
  const auto v = optional_integer(key);
  return v ? *v : fallback;
}

std::optional<int64_t> Options::optional_integer(const char* key) const {
  if (!has(key)) return std::nullopt;
  if (!config_[key].is_number_integer())
    throw error(std::string(key) + " must be an integer, got " + config_[key].dump());
  return config_[key].get<int64_t>();
}

bool Options::boolean(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!config_[key].is_boolean()) throw error(std::string(key) + " must be true or false, got " + config_[key].dump());
  return config_[key].get<bool>();
}

std::string Options::choice(const char* key, const std::string& fallback,
                            std::initializer_list<const char*> allowed) const {
  std::string v = fallback;
  if (config_.contains(key) && config_[key].is_null()) v = "null";
  if (has(key)) v = config_[key].is_string() ? config_[key].get<std::string>() : config_[key].dump();
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return v;
    list += std::string(list.empty() ? "" : ", ") + a;
  }
  throw error(std::string(key) + " must be one of " + list + ", got " + v);
}

std::vector<double> Options::thresholds(const char* key, std::vector<double> fallback) const {
  if (!has(key)) return fallback;
  const Json& j = config_[key];
  std::vector<double> t;
  for (const Json& v : j.is_array() ? j : Json::array({j})) {
    if (!v.is_number() || v.get<double>() < 0.0 || v.get<double>() > 1.0) {
      throw error(std::string(key) + " must be a number in [0, 1] or a list of them, got " + j.dump());
    }
    t.push_back(v.get<double>());
  }
  if (t.empty()) throw error(std::string(key) + " must not be empty");
  return t;
}

std::vector<int64_t> Options::integers(const char* key, std::vector<int64_t> fallback) const {
  if (!has(key)) return fallback;
  const Json& j = config_[key];
  std::vector<int64_t> v;
  for (const Json& x : j.is_array() ? j : Json::array({j})) {
    if (!x.is_number_integer()) throw error(std::string(key) + " must be a list of integers, got " + j.dump());
    v.push_back(x.get<int64_t>());
  }
  if (v.empty()) throw error(std::string(key) + " must not be empty");
  return v;
}

// ---- Batch ----

namespace {
int64_t class_axis(const at::Tensor& t) { return t.dim() >= 4 ? 1 : std::max<int64_t>(t.dim() - 1, 0); }
}  // namespace

Batch::Batch(const at::Tensor& output, const at::Tensor& target, bool logits, const Context& context,
             const at::Tensor& sample_weight)
    : output_(output.to(at::kFloat)),
      target_(target),
      sample_weight_(sample_weight.defined() ? sample_weight.to(output.device(), at::kDouble) : sample_weight),
      logits_(logits),
      context_(context) {}

at::Tensor Batch::weights_for(int64_t m) const {
  if (!sample_weight_.defined()) return {};
  const int64_t n = samples();
  const int64_t given = n > 0 ? sample_weight_.numel() / n : 0;
  if (n > 0 && sample_weight_.dim() >= 1 && sample_weight_.size(0) == n && m % n == 0 && given > 0 &&
      (m / n) % given == 0) {
    return sample_weight_.reshape({n, given, 1}).expand({n, given, m / n / given}).reshape({-1});
  }
  throw ConfigError("weighted metrics: sample_weight " + format_sizes(sample_weight_.sizes().vec()) +
                    " does not fit the output " + format_sizes(output_.sizes().vec()) + " and target " +
                    format_sizes(target_.sizes().vec()) +
                    "; give one weight per sample (N) or per entry of the target (its shape without the class axis)");
}

const at::Tensor& Batch::probabilities() const {
  if (!probabilities_.defined()) {
    if (!logits_) {
      probabilities_ = output_;
    } else {
      probabilities_ =
          context_.family == "binary_crossentropy" ? output_.sigmoid() : output_.softmax(class_axis(output_));
    }
  }
  return probabilities_;
}

bool Batch::sparse_target() const {
  if (output_.dim() < 2 || output_.size(class_axis(output_)) == 1) return false;
  if (target_.dim() + 1 == output_.dim()) return true;
  // Masks (N, H, W, 1) for images (N, K, H, W): Keras's trailing channel of class ids.
  if (output_.dim() >= 4 && target_.dim() == output_.dim() && target_.size(-1) == 1 &&
      target_.size(1) == output_.size(2))
    return true;
  return output_.dim() == 2 && target_.dim() == 2 && target_.size(1) == 1;
}

const at::Tensor& Batch::dense_target() const {
  if (!dense_.defined()) {
    if (sparse_target()) {
      const int64_t k = output_.size(class_axis(output_));
      const at::Tensor ids = target_.to(at::kLong);
      if (ids.numel() > 0 && (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= k)) {
        throw ConfigError("metrics: a sparse target's class lies outside the " + std::to_string(k) + " outputs (min " +
                          std::to_string(ids.min().item<int64_t>()) + ", max " +
                          std::to_string(ids.max().item<int64_t>()) + ")");
      }
      at::Tensor hot = at::one_hot(ids.reshape({target_.size(0), -1}), k).to(at::kFloat);
      if (output_.dim() >= 4) {
        std::vector<int64_t> held = {output_.size(0)};
        for (int64_t d = 2; d < output_.dim(); ++d) held.push_back(output_.size(d));
        held.push_back(k);
        dense_ = hot.reshape(held).movedim(-1, 1).contiguous();
      } else {
        dense_ = hot.reshape(output_.sizes());
      }
    } else if (target_.numel() == output_.numel()) {
      dense_ = target_.to(at::kFloat).reshape(output_.sizes());
    } else {
      throw ConfigError("metrics: target shape " + format_sizes(target_.sizes().vec()) +
                        " does not fit the model output " + format_sizes(output_.sizes().vec()));
    }
  }
  return dense_;
}

at::Tensor Batch::rows(const at::Tensor& t) const {
  if (t.dim() <= 1) return t.reshape({-1, 1});
  const int64_t a = class_axis(t);
  return t.movedim(a, -1).reshape({-1, t.size(a)});
}

const at::Tensor& Batch::probability_rows() const {
  if (!probability_rows_.defined()) probability_rows_ = rows(probabilities());
  return probability_rows_;
}

const at::Tensor& Batch::target_rows() const {
  if (!target_rows_.defined()) target_rows_ = rows(dense_target());
  return target_rows_;
}

const at::Tensor& Batch::target_ids() const {
  if (!ids_.defined()) {
    if (sparse_target() || output_.dim() < 2 || output_.size(class_axis(output_)) == 1) {
      ids_ = target_.reshape({-1}).round().to(at::kLong);
    } else {
      ids_ = target_rows().argmax(1);
    }
  }
  return ids_;
}

// ---- the catalogue ----

namespace {

using Factory = std::unique_ptr<KerasMetric> (*)(const Options&, const Context&);

struct ClassEntry {
  std::string default_name;
  std::set<std::string> args;  // besides name and dtype
  Factory make;
};

const std::map<std::string, ClassEntry>& catalogue() {
  static const std::set<std::string> kIouArgs = {"num_classes", "ignore_class", "sparse_y_true", "sparse_y_pred",
                                                 "axis"};
  static const std::map<std::string, ClassEntry> m = {
      {"BinaryAccuracy", {"binary_accuracy", {"threshold"}, make_mean_metric}},
      {"CategoricalAccuracy", {"categorical_accuracy", {}, make_mean_metric}},
      {"SparseCategoricalAccuracy", {"sparse_categorical_accuracy", {}, make_mean_metric}},
      {"TopKCategoricalAccuracy", {"top_k_categorical_accuracy", {"k"}, make_mean_metric}},
      {"SparseTopKCategoricalAccuracy",
       {"sparse_top_k_categorical_accuracy", {"k", "from_sorted_ids"}, make_mean_metric}},
      {"MeanSquaredError", {"mean_squared_error", {}, make_mean_metric}},
      {"RootMeanSquaredError", {"root_mean_squared_error", {}, make_mean_metric}},
      {"MeanAbsoluteError", {"mean_absolute_error", {}, make_mean_metric}},
      {"MeanAbsolutePercentageError", {"mean_absolute_percentage_error", {}, make_mean_metric}},
      {"MeanSquaredLogarithmicError", {"mean_squared_logarithmic_error", {}, make_mean_metric}},
      {"CosineSimilarity", {"cosine_similarity", {"axis"}, make_mean_metric}},
      {"LogCoshError", {"logcosh", {}, make_mean_metric}},
      {"Hinge", {"hinge", {}, make_mean_metric}},
      {"SquaredHinge", {"squared_hinge", {}, make_mean_metric}},
      {"CategoricalHinge", {"categorical_hinge", {}, make_mean_metric}},
      {"KLDivergence", {"kl_divergence", {}, make_mean_metric}},
      {"Poisson", {"poisson", {}, make_mean_metric}},
      {"BinaryCrossentropy", {"binary_crossentropy", {"from_logits", "label_smoothing"}, make_mean_metric}},
      {"CategoricalCrossentropy",
       {"categorical_crossentropy", {"from_logits", "label_smoothing", "axis"}, make_mean_metric}},
      {"SparseCategoricalCrossentropy",
       {"sparse_categorical_crossentropy", {"from_logits", "ignore_class", "axis"}, make_mean_metric}},
      {"R2Score", {"r2_score", {"class_aggregation", "num_regressors"}, make_r2_score}},
      {"TruePositives", {"true_positives", {"thresholds"}, make_confusion_metric}},
      {"TrueNegatives", {"true_negatives", {"thresholds"}, make_confusion_metric}},
      {"FalsePositives", {"false_positives", {"thresholds"}, make_confusion_metric}},
      {"FalseNegatives", {"false_negatives", {"thresholds"}, make_confusion_metric}},
      {"Precision", {"precision", {"thresholds", "top_k", "class_id"}, make_confusion_metric}},
      {"Recall", {"recall", {"thresholds", "top_k", "class_id"}, make_confusion_metric}},
      {"AUC",
       {"auc",
        {"num_thresholds", "curve", "summation_method", "thresholds", "multi_label", "num_labels", "label_weights",
         "from_logits"},
        make_confusion_metric}},
      {"PrecisionAtRecall", {"precision_at_recall", {"recall", "num_thresholds", "class_id"}, make_confusion_metric}},
      {"RecallAtPrecision",
       {"recall_at_precision", {"precision", "num_thresholds", "class_id"}, make_confusion_metric}},
      {"SensitivityAtSpecificity",
       {"sensitivity_at_specificity", {"specificity", "num_thresholds", "class_id"}, make_confusion_metric}},
      {"SpecificityAtSensitivity",
       {"specificity_at_sensitivity", {"sensitivity", "num_thresholds", "class_id"}, make_confusion_metric}},
      {"FBetaScore", {"fbeta_score", {"average", "beta", "threshold"}, make_fbeta_score}},
      {"F1Score", {"f1_score", {"average", "threshold"}, make_fbeta_score}},
      {"IoU",
       {"io_u",
        [] {
          auto a = kIouArgs;
          a.insert("target_class_ids");
          return a;
        }(),
        make_iou}},
      {"MeanIoU", {"mean_io_u", kIouArgs, make_iou}},
      {"BinaryIoU", {"binary_io_u", {"target_class_ids", "threshold"}, make_iou}},
      {"OneHotIoU",
       {"one_hot_io_u", {"num_classes", "target_class_ids", "ignore_class", "sparse_y_pred", "axis"}, make_iou}},
      {"OneHotMeanIoU", {"one_hot_mean_io_u", {"num_classes", "ignore_class", "sparse_y_pred", "axis"}, make_iou}},
  };
  return m;
}

// Keras's keras.src.utils.naming.to_snake_case.
std::string to_snake_case(const std::string& name) {
  std::string s = std::regex_replace(name, std::regex("(.)([A-Z][a-z]+)"), "$1_$2");
  s = std::regex_replace(s, std::regex("([a-z])([A-Z])"), "$1_$2");
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// ALL_OBJECTS_DICT of keras/src/metrics/__init__.py: class names, their snake_case, and the aliases.
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> m = [] {
    std::map<std::string, std::string> a;
    for (const auto& [cls, entry] : catalogue()) a[cls] = a[to_snake_case(cls)] = cls;
    for (const auto& [alias, cls] :
         std::vector<std::pair<const char*, const char*>>{{"bce", "BinaryCrossentropy"},
                                                          {"BCE", "BinaryCrossentropy"},
                                                          {"mse", "MeanSquaredError"},
                                                          {"MSE", "MeanSquaredError"},
                                                          {"mae", "MeanAbsoluteError"},
                                                          {"MAE", "MeanAbsoluteError"},
                                                          {"mape", "MeanAbsolutePercentageError"},
                                                          {"MAPE", "MeanAbsolutePercentageError"},
                                                          {"msle", "MeanSquaredLogarithmicError"},
                                                          {"MSLE", "MeanSquaredLogarithmicError"}}) {
      a[alias] = cls;
    }
    return a;
  }();
  return m;
}

std::string accuracy_class(const std::string& family) {
  if (family == "sparse_categorical_crossentropy") return "SparseCategoricalAccuracy";
  if (family == "binary_crossentropy") return "BinaryAccuracy";
  return "CategoricalAccuracy";
}

ConfigError unknown(const std::string& name) {
  std::string known = "accuracy, acc";
  for (const auto& n : metric_names()) {
    if (n != "accuracy" && n != "acc" && n.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string::npos) {
      known += ", " + n;
    }
  }
  for (const auto& n : torchfit::detail::registered_metric_names()) known += ", " + n;
  return ConfigError("unknown metric '" + name + "' (known: " + known +
                     ", their Keras class names, BCE, MSE, MAE, MAPE, MSLE, or {\"class_name\": ..., \"config\": "
                     "{...}}; a metric of your own needs register_metric first)");
}

// A registered metric (custom_objects.h) as a family: the user's update_state on the batch's target,
// probabilities and weights.
class UserMetric : public KerasMetric {
 public:
  UserMetric(std::string class_name, std::unique_ptr<torchfit::Metric> metric)
      : class_name_(std::move(class_name)), metric_(std::move(metric)) {
    if (!metric_ || metric_->state_size() == 0) {
      throw ConfigError("metric " + class_name_ + " (registered): its factory gave " +
                        (metric_ ? "a metric with no state" : "no metric"));
    }
  }
  size_t state_size() const override { return metric_->state_size(); }
  void update(const Batch& b, double* s) const override {
    metric_->update_state(b.target(), b.probabilities(), b.sample_weight(), s);
  }
  std::vector<double> result(const double* s) const override { return metric_->result(s); }

 private:
  std::string class_name_;
  std::unique_ptr<torchfit::Metric> metric_;
};

Spec spec_of_json(const std::string& entry) {
  Json j;
  try {
    j = Json::parse(entry);
  } catch (const Json::exception& e) {
    throw ConfigError("metric: not valid JSON: " + entry + " (" + e.what() + ")");
  }
  Spec s;
  std::tie(s.class_name, s.config) = keras_object(j, "a metric");
  const auto it = catalogue().find(s.class_name);
  std::string default_name;
  if (it != catalogue().end()) {
    default_name = it->second.default_name;
  } else if (!torchfit::detail::registered_metric(s.class_name, &default_name)) {
    throw unknown(s.class_name);
  }
  if (!s.config.is_object()) throw ConfigError("metric " + s.class_name + ": config must be an object");
  const Json name = s.config.value("name", Json());
  if (!name.is_null() && !name.is_string()) throw ConfigError("metric " + s.class_name + ": name must be a string");
  s.log_name = name.is_string() ? name.get<std::string>() : default_name;
  return s;
}

}  // namespace

std::vector<std::string> metric_names() {
  std::set<std::string> names = {"accuracy", "acc"};
  for (const auto& [alias, cls] : aliases()) names.insert(alias);
  return {names.begin(), names.end()};
}

Spec parse_metric(const std::string& entry, const Context& context) {
  Spec s;
  if (!entry.empty() && entry.front() == '{') {
    s = spec_of_json(entry);
  } else {
    s.log_name = entry;
    if (entry == "accuracy" || entry == "acc") {
      s.class_name = accuracy_class(context.family);
    } else {
      const auto it = aliases().find(entry);
      std::string default_name;
      if (it != aliases().end()) {
        s.class_name = it->second;
      } else if (torchfit::detail::registered_metric(entry, &default_name)) {
        s.class_name = entry, s.log_name = default_name;
      } else {
        throw unknown(entry);
      }
    }
    // torchfit's one number for the name "f1_score" (Keras's F1Score() gives one value per class): the
    // macro average, a single sigmoid unit thresholded at 0.5.
    if (entry == "f1_score") {
      s.config = {{"average", "macro"}};
      if (context.outputs == 1) s.config["threshold"] = 0.5;
    }
  }
  if (!catalogue().count(s.class_name)) return s;  // a registered metric reads its own config
  for (const auto& item : s.config.items()) {
    const auto& args = catalogue().at(s.class_name).args;
    if (item.key() != "name" && item.key() != "dtype" && !args.count(item.key())) {
      throw ConfigError("metric " + s.class_name + " takes no argument '" + item.key() + "'");
    }
  }
  return s;
}

std::unique_ptr<KerasMetric> build_metric(const Spec& spec, const Context& context) {
  const auto it = catalogue().find(spec.class_name);
  if (it != catalogue().end()) return it->second.make(Options(spec.class_name, spec.config), context);
  const torchfit::MetricFactory* factory = torchfit::detail::registered_metric(spec.class_name);
  if (!factory) throw unknown(spec.class_name);
  return std::make_unique<UserMetric>(spec.class_name, (*factory)(spec.config));
}

}  // namespace torchfit::metric
