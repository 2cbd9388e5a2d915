#include <torchfit/layers/initializers.h>

#include <ATen/CPUGeneratorImpl.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <torchfit/error.h>
#include <torchfit/layers/keras_object.h>
#include <torchfit/layers/shape.h>

namespace torchfit {

using Json = nlohmann::json;

namespace {

// Every name Keras's initializers.get takes → the class torchfit calls it by (keras/src/initializers/__init__.py).
const std::map<std::string, std::string>& class_aliases() {
  static const std::map<std::string, std::string> aliases = [] {
    std::map<std::string, std::string> m;
    const std::vector<std::pair<std::string, std::string>> classes = {{"GlorotUniform", "glorot_uniform"},
                                                                      {"GlorotNormal", "glorot_normal"},
                                                                      {"HeUniform", "he_uniform"},
                                                                      {"HeNormal", "he_normal"},
                                                                      {"LecunUniform", "lecun_uniform"},
                                                                      {"LecunNormal", "lecun_normal"},
                                                                      {"RandomNormal", "random_normal"},
                                                                      {"RandomUniform", "random_uniform"},
                                                                      {"TruncatedNormal", "truncated_normal"},
                                                                      {"VarianceScaling", "variance_scaling"},
                                                                      {"Orthogonal", "orthogonal"},
                                                                      {"Zeros", "zeros"},
                                                                      {"Ones", "ones"},
                                                                      {"Constant", "constant"},
                                                                      {"Identity", "identity"}};
    for (const auto& [cls, snake] : classes) m[cls] = m[snake] = cls;
    m["OrthogonalInitializer"] = m["orthogonal_initializer"] = "Orthogonal";
    m["IdentityInitializer"] = m["identity_initializer"] = "Identity";
    m["uniform"] = "RandomUniform";
    m["normal"] = "RandomNormal";
    m["one"] = "Ones";
    m["zero"] = "Zeros";
    return m;
  }();
  return aliases;
}

// The arguments each class takes (besides "dtype", which tf.keras 1 wrote and is ignored).
const std::set<std::string>& class_arguments(const std::string& cls) {
  static const std::map<std::string, std::set<std::string>> args = {
      {"VarianceScaling", {"scale", "mode", "distribution", "seed", "input_axes", "output_axes"}},
      {"RandomNormal", {"mean", "stddev", "seed"}},
      {"TruncatedNormal", {"mean", "stddev", "seed"}},
      {"RandomUniform", {"minval", "maxval", "seed"}},
      {"Orthogonal", {"gain", "seed"}},
      {"Constant", {"value"}},
      {"Identity", {"gain"}},
      {"Zeros", {}},
      {"Ones", {}}};
  static const std::set<std::string> scaling = {"seed", "input_axes", "output_axes"};
  auto it = args.find(cls);
  return it == args.end() ? scaling : it->second;  // Glorot*, He*, Lecun* (axes since Keras 3.15)
}

double number(const Json& config, const char* key, double fallback, const std::string& who) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  if (!config[key].is_number()) {
    throw ConfigError(who + ": " + key + " must be a number, got " + config[key].dump());
  }
  return config[key].get<double>();
}

std::string text(const Json& config, const char* key, const std::string& fallback, const std::string& who) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  if (!config[key].is_string()) throw ConfigError(who + ": " + key + " must be a string, got " + config[key].dump());
  return config[key].get<std::string>();
}

// Keras 3.15's input_axes / output_axes (lists of axes of the weight; null = compute_fans's rule).
std::optional<std::vector<int64_t>> axes_of(const Json& config, const char* key, const std::string& who) {
  if (!config.contains(key) || config[key].is_null()) return std::nullopt;
  const Json& v = config[key];
  if (!v.is_array()) throw ConfigError(who + ": " + key + " must be a list of axes or null, got " + v.dump());
  std::vector<int64_t> axes;
  for (const auto& a : v) {
    if (!a.is_number_integer()) throw ConfigError(who + ": " + key + " must be a list of axes, got " + v.dump());
    axes.push_back(a.get<int64_t>());
  }
  return axes;
}

// The fans of a draw: Keras's product over input_axes / output_axes when both are given, else keras_fans.
std::pair<int64_t, int64_t> fans_of(const Json& config, at::IntArrayRef shape, const std::string& who) {
  const auto in = axes_of(config, "input_axes", who), out = axes_of(config, "output_axes", who);
  if (!in || !out) return keras_fans(shape);
  auto product = [&](const std::vector<int64_t>& axes) {
    int64_t p = 1;
    for (int64_t a : axes) {
      const int64_t r = static_cast<int64_t>(shape.size());
      if (a < -r || a >= r) {
        throw ConfigError(who + ": axis " + std::to_string(a) + " is outside the weight " + format_sizes(shape.vec()));
      }
      p *= shape[a < 0 ? a + r : a];
    }
    return p;
  };
  return {product(*in), product(*out)};
}

// VarianceScaling's three numbers of any class that is one (Glorot*, He*, Lecun*, VarianceScaling).
struct Scaling {
  double scale;
  std::string mode, distribution;
};
std::optional<Scaling> scaling_of(const Initializer& init, const std::string& who) {
  static const std::map<std::string, Scaling> fixed = {
      {"GlorotUniform", {1.0, "fan_avg", "uniform"}}, {"GlorotNormal", {1.0, "fan_avg", "truncated_normal"}},
      {"HeUniform", {2.0, "fan_in", "uniform"}},      {"HeNormal", {2.0, "fan_in", "truncated_normal"}},
      {"LecunUniform", {1.0, "fan_in", "uniform"}},   {"LecunNormal", {1.0, "fan_in", "truncated_normal"}}};
  auto it = fixed.find(init.class_name);
  if (it != fixed.end()) return it->second;
  if (init.class_name != "VarianceScaling") return std::nullopt;
  Scaling s{number(init.config, "scale", 1.0, who), text(init.config, "mode", "fan_in", who),
            text(init.config, "distribution", "truncated_normal", who)};
  std::transform(s.distribution.begin(), s.distribution.end(), s.distribution.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s.distribution == "normal") s.distribution = "truncated_normal";
  if (s.scale <= 0.0) throw ConfigError(who + ": scale must be > 0, got " + std::to_string(s.scale));
  if (s.mode != "fan_in" && s.mode != "fan_out" && s.mode != "fan_avg") {
    throw ConfigError(who + ": mode must be 'fan_in', 'fan_out' or 'fan_avg', got '" + s.mode + "'");
  }
  if (s.distribution != "truncated_normal" && s.distribution != "untruncated_normal" && s.distribution != "uniform") {
    throw ConfigError(who + ": distribution must be 'truncated_normal', 'untruncated_normal' or 'uniform', got '" +
                      s.distribution + "'");
  }
  return s;
}

void check_arguments(const Initializer& init, const std::string& who) {
  if (!init.config.is_object()) throw ConfigError(who + ": config must be an object, got " + init.config.dump());
  const auto& allowed = class_arguments(init.class_name);
  for (const auto& item : init.config.items()) {
    if (item.key() == "dtype" || allowed.count(item.key())) continue;
    throw ConfigError(who + ": " + init.class_name + " takes no argument '" + item.key() + "'");
  }
  if (init.config.contains("seed") && !init.config["seed"].is_null() && !init.config["seed"].is_number_integer()) {
    throw ConfigError(who + ": seed must be an integer or null, got " + init.config["seed"].dump());
  }
  scaling_of(init, who);
  axes_of(init.config, "input_axes", who);
  axes_of(init.config, "output_axes", who);
  if (number(init.config, "stddev", 0.05, who) < 0.0) throw ConfigError(who + ": stddev must be >= 0");
  if (number(init.config, "minval", -0.05, who) > number(init.config, "maxval", 0.05, who)) {
    throw ConfigError(who + ": minval must be <= maxval");
  }
  for (const char* k : {"gain", "value", "mean"}) number(init.config, k, 0.0, who);
}

// The generator of a draw: one seeded with the initializer's seed, else LibTorch's default.
c10::optional<at::Generator> generator_of(const Json& config) {
  if (!config.contains("seed") || !config["seed"].is_number_integer()) return c10::nullopt;
  return at::detail::createCPUGenerator(static_cast<uint64_t>(config["seed"].get<int64_t>()));
}

// A normal of (mean, stddev) cut at two stddev: the inverse CDF of a uniform draw over (Φ(−2), Φ(2)),
// the same distribution as Keras's redraw of values beyond two stddev.
at::Tensor truncated_normal(at::IntArrayRef shape, double mean, double stddev, c10::optional<at::Generator> gen) {
  const double lo = 0.5 * (1.0 + std::erf(-2.0 / std::sqrt(2.0)));
  at::Tensor u = at::empty(shape, at::kDouble).uniform_(lo, 1.0 - lo, gen);
  at::Tensor z = (at::erfinv(u * 2.0 - 1.0) * std::sqrt(2.0)).clamp_(-2.0, 2.0);
  return (z * stddev + mean).to(at::kFloat);
}

at::Tensor variance_scaling(const Scaling& s, at::IntArrayRef shape, std::pair<int64_t, int64_t> fans,
                            c10::optional<at::Generator> gen) {
  const auto [fan_in, fan_out] = fans;
  const double fan = s.mode == "fan_in"    ? static_cast<double>(fan_in)
                     : s.mode == "fan_out" ? static_cast<double>(fan_out)
                                           : (fan_in + fan_out) / 2.0;
  const double v = s.scale / std::max(1.0, fan);
  if (s.distribution == "truncated_normal")
    return truncated_normal(shape, 0.0, std::sqrt(v) / 0.87962566103423978, gen);
  if (s.distribution == "untruncated_normal") return at::normal(0.0, std::sqrt(v), shape, gen).to(at::kFloat);
  const double limit = std::sqrt(3.0 * v);
  return at::empty(shape, at::kFloat).uniform_(-limit, limit, gen);
}

at::Tensor orthogonal(at::IntArrayRef shape, double gain, c10::optional<at::Generator> gen, const std::string& who) {
  if (shape.size() < 2) {
    throw ConfigError(who + ": Orthogonal needs a weight of rank >= 2, got " + format_sizes(shape.vec()));
  }
  const int64_t cols = shape.back();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  const at::Tensor a = at::normal(0.0, 1.0, {std::max(rows, cols), std::min(rows, cols)}, gen, at::kFloat);
  auto qr = at::linalg_qr(a);
  at::Tensor q = std::get<0>(qr) * at::sign(at::diagonal(std::get<1>(qr)));
  if (rows < cols) q = q.t();
  return (q * gain).reshape(shape).contiguous();
}

}  // namespace

std::pair<int64_t, int64_t> keras_fans(at::IntArrayRef s) {
  if (s.empty()) return {1, 1};
  if (s.size() == 1) return {s[0], s[0]};
  int64_t field = 1;
  for (size_t i = 0; i + 2 < s.size(); ++i) field *= s[i];
  return {s[s.size() - 2] * field, s.back() * field};
}

std::string initializer_config_key(const std::string& weight) {
  for (const char* k : {"depthwise", "pointwise", "recurrent"}) {
    if (weight == std::string(k) + "_kernel") return std::string(k) + "_initializer";
  }
  return weight + "_initializer";
}

std::string initializer_weight(const std::string& key) {
  const std::string stem = key.substr(0, key.size() - std::string("_initializer").size());
  return stem == "depthwise" || stem == "pointwise" || stem == "recurrent" ? stem + "_kernel" : stem;
}

std::vector<std::string> initializer_names() {
  std::set<std::string> names;
  for (const auto& [alias, cls] : class_aliases()) names.insert(cls);
  return {names.begin(), names.end()};
}

Initializer Initializer::from_json(const Json& spec, const std::string& who) {
  Initializer init;
  std::string name;
  std::tie(name, init.config) = keras_object(spec, who + ": an initializer");
  auto it = class_aliases().find(name);
  if (it == class_aliases().end()) {
    std::string known;
    for (const auto& n : initializer_names()) known += (known.empty() ? "" : ", ") + n;
    throw ConfigError(who + ": unknown initializer '" + name + "' (known: " + known + ")");
  }
  init.class_name = it->second;
  check_arguments(init, who);
  return init;
}

Json Initializer::to_json() const { return {{"class_name", class_name}, {"config", config}}; }

at::Tensor Initializer::draw(at::IntArrayRef shape, const std::string& who) const {
  const auto gen = generator_of(config);
  if (auto s = scaling_of(*this, who)) return variance_scaling(*s, shape, fans_of(config, shape, who), gen);
  const double mean = number(config, "mean", 0.0, who), stddev = number(config, "stddev", 0.05, who);
  if (class_name == "RandomNormal") return at::normal(mean, stddev, shape, gen).to(at::kFloat);
  if (class_name == "TruncatedNormal") return truncated_normal(shape, mean, stddev, gen);
  if (class_name == "RandomUniform") {
    return at::empty(shape, at::kFloat)
        .uniform_(number(config, "minval", -0.05, who), number(config, "maxval", 0.05, who), gen);
  }
  if (class_name == "Orthogonal") return orthogonal(shape, number(config, "gain", 1.0, who), gen, who);
  if (class_name == "Zeros") return at::zeros(shape, at::kFloat);
  if (class_name == "Ones") return at::ones(shape, at::kFloat);
  if (class_name == "Constant") return at::full(shape, number(config, "value", 0.0, who), at::kFloat);
  if (shape.size() != 2) {
    throw ConfigError(who + ": Identity needs a 2-D weight, got " + format_sizes(shape.vec()));
  }
  return at::eye(shape[0], shape[1], at::kFloat) * number(config, "gain", 1.0, who);
}

}  // namespace torchfit
