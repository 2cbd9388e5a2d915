#include <torchfit/training/losses.h>

#include <ATen/ATen.h>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <torchfit/error.h>
#include <torchfit/layers/keras_object.h>
#include <torchfit/layers/shape.h>
#include <torchfit/training/custom_objects.h>

namespace torchfit {

using Json = nlohmann::json;

namespace {
constexpr double kEpsilon = 1e-7;  // Keras backend epsilon

std::string shape_text(const at::Tensor& t) { return format_sizes(t.sizes().vec()); }

// Class → Keras's function name, and the arguments the class takes besides reduction, name and dtype.
struct ClassInfo {
  std::string function;
  std::set<std::string> args;
};
const std::map<std::string, ClassInfo>& classes() {
  static const std::map<std::string, ClassInfo> m = {
      {"MeanSquaredError", {"mean_squared_error", {}}},
      {"MeanAbsoluteError", {"mean_absolute_error", {}}},
      {"MeanAbsolutePercentageError", {"mean_absolute_percentage_error", {}}},
      {"MeanSquaredLogarithmicError", {"mean_squared_logarithmic_error", {}}},
      {"CosineSimilarity", {"cosine_similarity", {"axis"}}},
      {"Huber", {"huber", {"delta"}}},
      {"LogCosh", {"log_cosh", {}}},
      {"Hinge", {"hinge", {}}},
      {"SquaredHinge", {"squared_hinge", {}}},
      {"CategoricalHinge", {"categorical_hinge", {}}},
      {"KLDivergence", {"kl_divergence", {}}},
      {"Poisson", {"poisson", {}}},
      {"BinaryCrossentropy", {"binary_crossentropy", {"from_logits", "label_smoothing", "axis"}}},
      {"CategoricalCrossentropy", {"categorical_crossentropy", {"from_logits", "label_smoothing", "axis"}}},
      {"SparseCategoricalCrossentropy", {"sparse_categorical_crossentropy", {"from_logits", "ignore_class", "axis"}}},
      {"BinaryFocalCrossentropy",
       {"binary_focal_crossentropy",
        {"apply_class_balancing", "alpha", "gamma", "from_logits", "label_smoothing", "axis"}}},
      {"CategoricalFocalCrossentropy",
       {"categorical_focal_crossentropy", {"alpha", "gamma", "from_logits", "label_smoothing", "axis"}}},
      {"Dice", {"dice", {"axis"}}},
      {"Tversky", {"tversky", {"alpha", "beta", "axis"}}}};
  return m;
}

// Every name compile() takes → the class (keras/src/losses/__init__.py and its legacy aliases).
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> m = [] {
    std::map<std::string, std::string> a;
    for (const auto& [cls, info] : classes()) a[cls] = a[info.function] = cls;
    for (const auto& [alias, cls] :
         std::vector<std::pair<const char*, const char*>>{{"mse", "MeanSquaredError"},
                                                          {"MSE", "MeanSquaredError"},
                                                          {"mae", "MeanAbsoluteError"},
                                                          {"MAE", "MeanAbsoluteError"},
                                                          {"mape", "MeanAbsolutePercentageError"},
                                                          {"MAPE", "MeanAbsolutePercentageError"},
                                                          {"msle", "MeanSquaredLogarithmicError"},
                                                          {"MSLE", "MeanSquaredLogarithmicError"},
                                                          {"logcosh", "LogCosh"},
                                                          {"kld", "KLDivergence"},
                                                          {"KLD", "KLDivergence"},
                                                          {"kullback_leibler_divergence", "KLDivergence"},
                                                          {"huber_loss", "Huber"}}) {
      a[alias] = cls;
    }
    return a;
  }();
  return m;
}

double number(const Json& c, const char* key, double fallback) {
  if (!c.contains(key) || c[key].is_null()) return fallback;
  return c[key].get<double>();
}
bool flag(const Json& c, const char* key) { return c.contains(key) && c[key].is_boolean() && c[key].get<bool>(); }

void check_reduction(const Loss& l, const std::string& who) {
  const Json r = l.config.value("reduction", Json("sum_over_batch_size"));
  if (!r.is_string() || (r != "sum_over_batch_size" && r != "mean" && r != "sum" && r != "mean_with_sample_weight")) {
    throw ConfigError(who +
                      ": reduction must be 'sum_over_batch_size', 'mean', 'sum' or 'mean_with_sample_weight' "
                      "(fit trains on one number), got " +
                      r.dump());
  }
}

void check_config(const Loss& l) {
  const std::string who = "loss " + l.class_name;
  if (!l.config.is_object()) throw ConfigError(who + ": config must be an object, got " + l.config.dump());
  if (!classes().count(l.class_name)) return check_reduction(l, who);  // a user loss: its own arguments
  const auto& args = classes().at(l.class_name).args;
  for (const auto& item : l.config.items()) {
    const std::string& k = item.key();
    if (k == "name" || k == "dtype" || k == "reduction" || args.count(k)) continue;
    throw ConfigError(who + " takes no argument '" + k + "'");
  }
  for (const char* k : {"from_logits", "apply_class_balancing"}) {
    if (l.config.contains(k) && !l.config[k].is_boolean()) throw ConfigError(who + ": " + k + " must be true or false");
  }
  for (const char* k : {"label_smoothing", "delta", "alpha", "beta", "gamma", "ignore_class"}) {
    if (l.config.contains(k) && !l.config[k].is_null() && !l.config[k].is_number()) {
      throw ConfigError(who + ": " + k + " must be a number, got " + l.config[k].dump());
    }
  }
  if (l.config.contains("axis") && !l.config["axis"].is_null() && l.config["axis"] != -1) {
    throw ConfigError(who + ": axis must be -1 (the last Keras axis)" +
                      std::string(l.class_name == "Dice" || l.class_name == "Tversky" ? " or null" : "") + ", got " +
                      l.config["axis"].dump());
  }
  const double s = number(l.config, "label_smoothing", 0.0);
  if (s < 0.0 || s > 1.0) throw ConfigError(who + ": label_smoothing must lie in [0, 1], got " + std::to_string(s));
  if (number(l.config, "delta", 1.0) <= 0.0) throw ConfigError(who + ": delta must be > 0");
  if (number(l.config, "gamma", 2.0) < 0.0) throw ConfigError(who + ": gamma must be >= 0");
  check_reduction(l, who);
}

// A registered loss's values, checked to be one per sample (or per entry) or a scalar.
at::Tensor user_values(const Loss& l, const LossFunction& f, const at::Tensor& output, const at::Tensor& target) {
  at::Tensor v = f(target, output, l.config);
  if (v.defined() && output.requires_grad() && !v.requires_grad()) {
    throw ConfigError("loss " + l.class_name +
                      " (registered): its value does not depend on y_pred through autograd (detached, or cast "
                      "to an integer type?): fit cannot train on it");
  }
  if (!v.defined() || (v.dim() > 0 && (v.size(0) != output.size(0)))) {
    throw ConfigError("loss " + l.class_name + " (registered): its function returned " +
                      (v.defined() ? format_sizes(v.sizes().vec()) : std::string("no tensor")) + " for a batch of " +
                      std::to_string(output.size(0)) + "; return one value per sample (N), per entry, or a scalar");
  }
  return v;
}

// The held axis of Keras's last axis: the channels (1) of an image or volume held (N, C, …), else the last.
int64_t last_axis(const at::Tensor& t) { return t.dim() >= 4 ? 1 : t.dim() - 1; }

void expect_same_shape(const std::string& loss, const at::Tensor& out, const at::Tensor& y) {
  if (out.sizes() != y.sizes()) {
    throw ConfigError(loss + ": target shape " + shape_text(y) + " does not match the model output " + shape_text(out) +
                      " (class_mode must fit the loss: categorical ⇒ one-hot (N, K))");
  }
}

// The target as the output's shape: (N) read as (N, 1) for an (N, 1) output (Keras's squeeze_or_expand).
at::Tensor fitted_target(const std::string& loss, const at::Tensor& out, const at::Tensor& y) {
  at::Tensor t = y.to(out.scalar_type());
  if (t.dim() + 1 == out.dim() && out.size(-1) == 1) t = t.unsqueeze(-1);
  if (t.dim() + 1 == out.dim() && out.dim() >= 4 && out.size(1) == 1) t = t.unsqueeze(1);  // masks (N, H, W)
  expect_same_shape(loss, out, t);
  return t;
}

}  // namespace

namespace {

// Keras 2.x's backend cross-entropies (the formulas compute_loss documents), per sample over `axis`.
at::Tensor categorical_values(const at::Tensor& out, const at::Tensor& y, bool logits, int64_t axis) {
  if (logits) return -(y * out.log_softmax(axis)).sum(axis);
  const at::Tensor p = (out / out.sum(axis, true)).clamp(kEpsilon, 1.0 - kEpsilon);
  return -(y * p.log()).sum(axis);
}

at::Tensor binary_values(const at::Tensor& out, const at::Tensor& y, bool logits) {
  if (logits) return at::binary_cross_entropy_with_logits(out, y, {}, {}, at::Reduction::None);
  const at::Tensor p = out.clamp(kEpsilon, 1.0 - kEpsilon);
  return -(y * (p + kEpsilon).log() + (1.0 - y) * (1.0 - p + kEpsilon).log());
}

// Sparse targets (N) or (N, T) for outputs (N, K) or (N, T, K) (a trailing 1 squeezed, as Keras); class ids
// (N, H, W) for images (N, K, H, W) (segmentation: the classes on axis 1, Keras's last axis).
at::Tensor sparse_values(const Loss& l, const at::Tensor& output, const at::Tensor& target, bool logits) {
  const at::Tensor out = output.dim() >= 4 ? output.movedim(1, -1) : output;
  at::Tensor t = target;
  if (t.dim() == out.dim() && t.size(-1) == 1) t = t.squeeze(-1);
  if (out.dim() < 2 || t.dim() != out.dim() - 1 || t.sizes() != out.sizes().slice(0, out.dim() - 1)) {
    throw ConfigError("sparse_categorical_crossentropy: target shape " + shape_text(target) +
                      " must be (N) class indices ((N, H, W) for images) for output " + shape_text(output));
  }
  const int64_t k = out.size(-1);
  at::Tensor idx = t.reshape({-1}).to(at::kLong);
  const at::Tensor flat = out.reshape({-1, k});
  at::Tensor valid;
  if (l.config.contains("ignore_class") && l.config["ignore_class"].is_number()) {
    valid = idx != l.config["ignore_class"].get<int64_t>();
    idx = at::where(valid, idx, at::zeros_like(idx));
  }
  if (idx.numel() > 0) {  // LibTorch's own message ("Target 2 is out of bounds") names neither side
    // Float targets must hold whole numbers: a cast would truncate 1.7 to class 1 without a word.
    const at::Tensor fraction = t.is_floating_point() ? (t - t.round()).abs().max().to(at::kDouble)
                                                      : at::zeros({}, idx.options().dtype(at::kDouble));
    const at::Tensor range = at::stack({idx.min().to(at::kDouble), idx.max().to(at::kDouble), fraction}).cpu();
    if (!(range[2].item<double>() == 0)) {  // a fraction, or nan (the same device sync as the range)
      const at::Tensor flat_t = t.reshape({-1}).to(at::kDouble);
      const at::Tensor off = (flat_t - flat_t.round()).abs();
      const int64_t at_i = at::where(off.isnan(), at::full_like(off, 2.0), off).argmax().item<int64_t>();
      std::ostringstream id;
      id.precision(10);
      id << flat_t[at_i].item<double>();
      throw ConfigError("sparse_categorical_crossentropy: a target class id is " + id.str() + " (entry " +
                        std::to_string(at_i) + " of the batch's targets)" +
                        ", not a whole number (sparse targets are class indices; probabilities per class need "
                        "categorical_crossentropy)");
    }
    const auto lo = static_cast<int64_t>(range[0].item<double>()), hi = static_cast<int64_t>(range[1].item<double>());
    if (lo < 0 || hi >= k) {
      throw ConfigError("sparse_categorical_crossentropy: a target class id is " + std::to_string(lo < 0 ? lo : hi) +
                        " but the output " + shape_text(output) + " has " + std::to_string(k) + " classes (ids 0.." +
                        std::to_string(k - 1) + ")");
    }
  }
  const at::Tensor logp = logits ? flat.log_softmax(1) : flat.clamp(kEpsilon, 1.0 - kEpsilon).log().log_softmax(1);
  at::Tensor v = at::nll_loss(logp, idx, {}, at::Reduction::None);
  if (valid.defined()) v = at::where(valid, v, at::zeros_like(v));
  return v.reshape(t.sizes());
}

// Label smoothing: y(1 − s) + s/2 (binary) or + s/K (categorical, K the classes on `axis`).
at::Tensor smoothed(const Loss& l, const at::Tensor& y, bool binary, int64_t k) {
  const double s = number(l.config, "label_smoothing", 0.0);
  if (s == 0.0) return y;
  return y * (1.0 - s) + (binary ? 0.5 * s : s / static_cast<double>(k));
}

at::Tensor focal_values(const Loss& l, const at::Tensor& out, const at::Tensor& y0, bool logits, int64_t axis) {
  const double alpha = number(l.config, "alpha", 0.25), gamma = number(l.config, "gamma", 2.0);
  if (l.class_name == "BinaryFocalCrossentropy") {
    const at::Tensor y = smoothed(l, y0, true, 2);
    const at::Tensor p = logits ? out.sigmoid() : out;
    const at::Tensor pc = p.clamp(kEpsilon, 1.0 - kEpsilon);  // Keras 3's ops.binary_crossentropy
    const at::Tensor bce = -(y * pc.log() + (1.0 - y) * (1.0 - pc).log());
    const at::Tensor pt = y * p + (1.0 - y) * (1.0 - p);
    at::Tensor f = (1.0 - pt).pow(gamma) * bce;
    if (flag(l.config, "apply_class_balancing")) f = (y * alpha + (1.0 - y) * (1.0 - alpha)) * f;
    return f.mean(axis);
  }
  const at::Tensor y = smoothed(l, y0, false, out.size(axis));
  const at::Tensor p = logits ? out.softmax(axis) : out;
  const at::Tensor o = (p / p.sum(axis, true)).clamp(kEpsilon, 1.0 - kEpsilon);
  return (alpha * (1.0 - o).pow(gamma) * (-y * o.log())).sum(axis);
}

at::Tensor regression_values(const Loss& l, const at::Tensor& p, const at::Tensor& y, int64_t a) {
  const std::string& c = l.class_name;
  if (c == "MeanSquaredError") return (y - p).square().mean(a);
  if (c == "MeanAbsoluteError") return (y - p).abs().mean(a);
  if (c == "MeanAbsolutePercentageError") return 100.0 * ((y - p) / y.abs().clamp_min(kEpsilon)).abs().mean(a);
  if (c == "MeanSquaredLogarithmicError") {
    return ((p.clamp_min(kEpsilon) + 1.0).log() - (y.clamp_min(kEpsilon) + 1.0).log()).square().mean(a);
  }
  if (c == "CosineSimilarity") {
    auto unit = [&](const at::Tensor& x) { return x * x.square().sum(a, true).clamp_min(kEpsilon * kEpsilon).rsqrt(); };
    return -(unit(y) * unit(p)).sum(a);
  }
  if (c == "Huber") {
    const double d = number(l.config, "delta", 1.0);
    const at::Tensor e = p - y;
    return at::where(e.abs() <= d, 0.5 * e.square(), d * e.abs() - 0.5 * d * d).mean(a);
  }
  if (c == "LogCosh") {
    const at::Tensor e = p - y;
    return (e + at::softplus(-2.0 * e) - std::log(2.0)).mean(a);
  }
  if (c == "Poisson") return (p - y * (p + kEpsilon).log()).mean(a);
  if (c == "KLDivergence") {
    const at::Tensor t = y.clamp(kEpsilon, 1.0), q = p.clamp(kEpsilon, 1.0);
    return (t * (t / q).log()).sum(a);
  }
  return {};
}

at::Tensor hinge_values(const Loss& l, const at::Tensor& p, const at::Tensor& y0, int64_t a) {
  if (l.class_name == "CategoricalHinge") {
    const at::Tensor pos = (y0 * p).sum(a), neg = std::get<0>(((1.0 - y0) * p).max(a));
    return (neg - pos + 1.0).clamp_min(0.0);
  }
  const bool binary = ((y0 == 0) | (y0 == 1)).all().item<bool>();  // Keras: {0, 1} labels → {−1, 1}
  const at::Tensor y = binary ? 2.0 * y0 - 1.0 : y0;
  const at::Tensor m = (1.0 - y * p).clamp_min(0.0);
  return (l.class_name == "SquaredHinge" ? m.square() : m).mean(a);
}

// Dice and Tversky over every axis (axis null) or the last Keras axis.
at::Tensor overlap_values(const Loss& l, const at::Tensor& p, const at::Tensor& y) {
  const bool all = !l.config.contains("axis") || l.config["axis"].is_null();
  const int64_t a = last_axis(p);
  auto sum = [&](const at::Tensor& x) { return all ? x.sum() : x.sum(a); };
  const at::Tensor inter = sum(y * p);
  if (l.class_name == "Dice") return 1.0 - 2.0 * inter / (sum(y) + sum(p) + kEpsilon);
  const double alpha = number(l.config, "alpha", 0.5), beta = number(l.config, "beta", 0.5);
  return 1.0 - inter / (inter + alpha * sum((1.0 - y) * p) + beta * sum(y * (1.0 - p)) + kEpsilon);
}

}  // namespace

std::vector<std::string> loss_names() {
  std::set<std::string> names;
  for (const auto& [alias, cls] : aliases()) names.insert(alias);
  return {names.begin(), names.end()};
}

Loss Loss::from_json(const Json& spec) {
  Loss l;
  std::string name;
  std::tie(name, l.config) = keras_object(spec, "a loss");
  auto it = aliases().find(name);
  if (it == aliases().end() && detail::registered_loss(name)) {
    l.class_name = name;
  } else if (it == aliases().end()) {
    std::string known, user;
    for (const auto& [cls, info] : classes()) known += (known.empty() ? "" : ", ") + info.function;
    for (const auto& n : detail::registered_loss_names()) user += ", " + n;
    throw ConfigError("unknown loss '" + name + "' (known: " + known +
                      ", their Keras class names and mse, mae, mape, msle, kld, logcosh" + user +
                      "; a loss of your own needs register_loss first)");
  } else {
    l.class_name = it->second;
  }
  check_config(l);
  return l;
}

Loss Loss::parse(const std::string& text) {
  if (!text.empty() && text.front() == '{') {
    Json spec;
    try {
      spec = Json::parse(text);
    } catch (const Json::exception& e) {
      throw ConfigError("loss: not valid JSON: " + text + " (" + e.what() + ")");
    }
    return from_json(spec);
  }
  return from_json(Json(text));
}

Json Loss::to_json() const { return {{"class_name", class_name}, {"config", config}}; }

std::string Loss::keras_name() const {
  const auto it = classes().find(class_name);
  return it == classes().end() ? class_name : it->second.function;
}

bool Loss::from_logits() const { return flag(config, "from_logits"); }

at::Tensor Loss::values(const at::Tensor& output, const at::Tensor& target, bool logits) const {
  const std::string& c = class_name;
  if (const LossFunction* f = detail::registered_loss(c)) return user_values(*this, *f, output, target);
  const std::string who = keras_name();
  if (c == "SparseCategoricalCrossentropy") return sparse_values(*this, output, target, logits);
  const at::Tensor y = fitted_target(who, output, target);
  const int64_t a = last_axis(output);
  if (c == "CategoricalCrossentropy")
    return categorical_values(output, smoothed(*this, y, false, output.size(a)), logits, a);
  if (c == "BinaryCrossentropy") return binary_values(output, smoothed(*this, y, true, 2), logits).mean(a);
  if (c == "BinaryFocalCrossentropy" || c == "CategoricalFocalCrossentropy") {
    return focal_values(*this, output, y, logits, a);
  }
  if (c == "Hinge" || c == "SquaredHinge" || c == "CategoricalHinge") return hinge_values(*this, output, y, a);
  if (c == "Dice" || c == "Tversky") return overlap_values(*this, output, y);
  return regression_values(*this, output, y, a);
}

at::Tensor Loss::valid_mask(const at::Tensor& target) const {
  if (class_name != "SparseCategoricalCrossentropy" || !config.contains("ignore_class") ||
      !config["ignore_class"].is_number()) {
    return {};
  }
  return target != config["ignore_class"].get<int64_t>();
}

at::Tensor Loss::reduce(const at::Tensor& values, const at::Tensor& sample_weight, const at::Tensor& valid,
                        double epsilon) const {
  if (values.dim() == 0) return values;
  const std::string r = config.value("reduction", std::string("sum_over_batch_size"));
  at::Tensor v = values;
  at::Tensor w;
  if (sample_weight.defined()) {
    w = sample_weight.to(v.device(), v.scalar_type());
    // Keras's squeeze_or_expand_to_same_rank: weights (N, 1) for values (N); weights (N) for values (N, T)
    // weigh every entry of their sample (tf.keras 2's broadcast).
    while (w.dim() > v.dim() && w.size(-1) == 1) w = w.squeeze(-1);
    while (w.dim() < v.dim()) w = w.unsqueeze(-1);
    bool fits = w.dim() == v.dim();
    for (int64_t d = 0; fits && d < w.dim(); ++d) fits = w.size(d) == v.size(d) || w.size(d) == 1;
    if (!fits) {
      throw ConfigError("loss " + keras_name() + ": sample_weight " + format_sizes(sample_weight.sizes().vec()) +
                        " does not fit the loss's values " + format_sizes(values.sizes().vec()) +
                        "; give one weight per sample (N) or per value (segmentation: (N, H, W))");
    }
    v = v * w;
  }
  // Keras's mask (SparseCategoricalCrossentropy's ignore_class): the mean over the valid entries.
  double count = static_cast<double>(v.numel());
  if (valid.defined() && (r == "sum_over_batch_size" || r == "mean")) count = valid.sum().item<double>() + epsilon;
  if (r == "sum") return v.sum();
  if (r == "mean_with_sample_weight" && w.defined()) return v.sum() / w.expand_as(v).sum().clamp_min(1e-30);
  return count > 0 ? v.sum() / count : v.sum() * 0.0;
}

at::Tensor compute_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target, bool from_logits) {
  return compute_loss(name, output, target, from_logits, at::Tensor());
}

at::Tensor compute_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target, bool from_logits,
                        const at::Tensor& sample_weight, const at::Tensor& mask) {
  const Loss l = Loss::parse(name);
  if (sample_weight.defined() && (sample_weight.dim() == 0 || sample_weight.size(0) != output.size(0))) {
    throw ConfigError("loss " + l.keras_name() + ": sample_weight has " +
                      (sample_weight.dim() == 0 ? std::string("no sample axis")
                                                : std::to_string(sample_weight.size(0)) + " entries") +
                      " for a batch of " + std::to_string(output.size(0)));
  }
  const at::Tensor values = l.values(output, target, from_logits || l.from_logits());
  if (!mask.defined()) return l.reduce(values, sample_weight, l.valid_mask(target));
  if (mask.sizes() != values.sizes()) {
    throw ConfigError("loss " + l.keras_name() + ": the output's mask " + format_sizes(mask.sizes().vec()) +
                      " does not fit its values " + format_sizes(values.sizes().vec()));
  }
  const at::Tensor valid = l.valid_mask(target);
  const at::Tensor keep = mask.to(values.device(), at::kBool);
  return l.reduce(values * keep.to(values.scalar_type()), sample_weight,
                  valid.defined() ? keep.logical_and(valid.to(keep.device())) : keep, 1e-7);
}

bool loss_uses_logits(const std::string& loss, const std::string& activation) {
  Loss l;
  try {
    l = Loss::parse(loss);
  } catch (const ConfigError&) {
    return false;
  }
  if (l.from_logits()) return false;
  const std::string& c = l.class_name;
  if (activation == "softmax") {
    return c == "CategoricalCrossentropy" || c == "SparseCategoricalCrossentropy" ||
           c == "CategoricalFocalCrossentropy";
  }
  if (activation == "sigmoid") return c == "BinaryCrossentropy" || c == "BinaryFocalCrossentropy";
  return false;
}

void check_loss(const std::string& name) { Loss::parse(name); }

namespace {

// The class of each sample, for its class weight.
at::Tensor sample_classes(const Loss& l, const at::Tensor& target) {
  if (l.class_name == "SparseCategoricalCrossentropy")
    return target.reshape({target.size(0), -1}).select(1, 0).to(at::kLong);
  if (l.class_name == "BinaryCrossentropy" || target.dim() == 1) {
    return target.reshape({target.size(0), -1}).select(1, 0).round().to(at::kLong);
  }
  return target.argmax(1);
}

}  // namespace

at::Tensor class_sample_weight(const std::string& name, const at::Tensor& target, const at::Tensor& class_weight) {
  const Loss l = Loss::parse(name);
  const bool per_entry = l.class_name == "SparseCategoricalCrossentropy" && target.dim() == 2 && target.size(1) != 1;
  if (target.dim() > 2 || per_entry) {
    throw ConfigError("class_weight: the targets " + shape_text(target) +
                      " hold a class per entry, not one per sample (Keras 3: class_weight is not supported for 3+ "
                      "dimensional targets); give per-entry sample weights instead");
  }
  const at::Tensor classes = sample_classes(l, target);
  const int64_t k = class_weight.numel();
  if (classes.numel() > 0 && (classes.min().item<int64_t>() < 0 || classes.max().item<int64_t>() >= k)) {
    throw ConfigError("class_weight: a target's class " + std::to_string(classes.max().item<int64_t>()) +
                      " has no weight (" + std::to_string(k) + " weights)");
  }
  return class_weight.to(target.device(), at::kFloat).index_select(0, classes.to(target.device()));
}

at::Tensor compute_weighted_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target,
                                 bool from_logits, const at::Tensor& class_weight) {
  return compute_loss(name, output, target, from_logits, class_sample_weight(name, target, class_weight));
}

}  // namespace torchfit
