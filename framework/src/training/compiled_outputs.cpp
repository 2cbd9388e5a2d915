// CompiledOutputs: Keras 3's CompileLoss and CompileMetrics (keras/src/trainers/compile_utils.py) for
// torchfit's models — a loss, a weight and metrics per output, their sum and their log names.
#include <torchfit/training/compiled_outputs.h>

#include <cmath>
#include <limits>
#include <set>

#include <ATen/ATen.h>

#include <torchfit/error.h>
#include <torchfit/model/model.h>
#include <torchfit/training/losses.h>

namespace torchfit {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return s;
}

// A compile() argument given per output — a JSON list in output order or an object output name → entry —
// as one entry per output (null where an object leaves an output out).
std::vector<nlohmann::json> per_output(const nlohmann::json& spec, const std::vector<std::string>& names,
                                       const std::string& what) {
  std::vector<nlohmann::json> out(names.size());
  if (spec.is_array()) {
    if (spec.size() != names.size()) {
      throw ConfigError("compile: " + what + " has " + std::to_string(spec.size()) + " entries but the model has " +
                        std::to_string(names.size()) + " outputs (" + joined(names) +
                        "); Keras: give one per output, in the model's output order, or an object by output name");
    }
    for (size_t i = 0; i < names.size(); ++i) out[i] = spec[i];
    return out;
  }
  if (!spec.is_object()) throw ConfigError("compile: " + what + " must be a list or an object by output name");
  for (const auto& [key, value] : spec.items()) {
    size_t i = 0;
    while (i < names.size() && names[i] != key) ++i;
    if (i == names.size()) {
      throw ConfigError("compile: " + what + " names the output '" + key + "', which the model does not have; its " +
                        "outputs are " + joined(names));
    }
    out[i] = value;
  }
  return out;
}

// A loss entry as CompileOptions::loss holds one: a name, or a Keras loss object as JSON text; "" = none.
std::string loss_text(const nlohmann::json& entry, const std::string& output) {
  if (entry.is_null()) return "";
  if (entry.is_string()) return entry.get<std::string>();
  if (entry.is_object()) return entry.dump();
  throw ConfigError("compile: the loss of output '" + output + "' must be a name, a Keras loss object or null, got " +
                    entry.dump());
}

std::vector<std::string> metric_texts(const nlohmann::json& entry, const std::string& output) {
  std::vector<std::string> out;
  if (entry.is_null()) return out;
  const nlohmann::json list = entry.is_array() ? entry : nlohmann::json::array({entry});
  for (const auto& m : list) {
    if (m.is_string()) {
      out.push_back(m.get<std::string>());
    } else if (m.is_object()) {
      out.push_back(m.dump());
    } else {
      throw ConfigError("compile: a metric of output '" + output + "' must be a name or a Keras metric object, got " +
                        m.dump());
    }
  }
  return out;
}

std::string activation_of(const KerasTensor& output) {
  const auto& layer = output.layer();
  return layer && output.node() && !output.node()->inputs.empty() ? layer->output_activation() : "linear";
}

}  // namespace

CompiledOutputs::CompiledOutputs(const CompileOptions& options, const ModelImpl& model) {
  for (const auto& o : model.outputs()) {
    Head h;
    h.name = o.layer() ? o.layer()->name() : "output_" + std::to_string(heads_.size() + 1);
    heads_.push_back(h);
    output_names_.push_back(h.name);
  }
  if (heads_.empty()) throw ConfigError("compile: the model has no outputs");
  resolve_losses(options);
  resolve_weights(options.loss_weights());
  logits_ = true;
  for (size_t i = 0; i < heads_.size(); ++i) {
    Head& h = heads_[i];
    h.from_logits = !h.loss.empty() && loss_uses_logits(h.loss, activation_of(model.outputs()[i]));
    logits_ = logits_ && h.from_logits;
  }
  add_metric_sets(model, options);
  size_t losses = 0;
  for (const auto& h : heads_) losses += h.loss.empty() ? 0 : 1;
  for (auto& h : heads_) {
    h.logs_loss = losses > 1 && !h.loss.empty();
    if (!h.logs_loss) continue;
    h.loss_offset = size_;
    size_ += 2;
    names_.push_back(h.name + "_loss");
  }
  std::set<std::string> seen;
  for (const auto& n : names_)
    if (!seen.insert(n).second) throw ConfigError("compile: the log name '" + n + "' is given twice");
}

// Each output's metrics, then its weighted metrics (Keras 3's CompileMetrics.result: a weighted metric
// whose name an earlier one has is logged as "weighted_<name>").
void CompiledOutputs::add_metric_sets(const ModelImpl& model, const CompileOptions& options) {
  const auto metrics = resolve_metrics(options);
  const auto weighted = resolve_weighted_metrics(options.weighted_metrics());
  const bool several = heads_.size() > 1;
  const auto prefix = [several](const Head& h) { return several ? h.name + "_" : std::string(); };
  std::vector<std::string> contexts;
  std::vector<int64_t> units;
  for (size_t i = 0; i < heads_.size(); ++i) {
    Head& h = heads_[i];
    const auto& shape = model.outputs()[i].shape();
    // "accuracy" takes its kind from the loss; an output without a loss takes it from its units, as
    // Keras 3's get_metric does from the shapes (one unit: binary, else categorical; sparse targets read too).
    units.push_back(shape.empty() ? 1 : shape.back());
    contexts.push_back(!h.loss.empty() ? h.loss : units[i] == 1 ? "binary_crossentropy" : "categorical_crossentropy");
    h.metrics = std::make_shared<MetricSet>(metrics[i], contexts[i], logits_, units[i]);
    h.metric_offset = size_;
    size_ += h.metrics->state_size();
    for (const auto& n : h.metrics->names()) names_.push_back(prefix(h) + n);
  }
  std::set<std::string> taken(names_.begin(), names_.end());
  for (size_t i = 0; i < heads_.size(); ++i) {
    Head& h = heads_[i];
    h.weighted = std::make_shared<MetricSet>(weighted[i], contexts[i], logits_, units[i]);
    h.weighted_offset = size_;
    size_ += h.weighted->state_size();
    for (const auto& n : h.weighted->names()) {
      const std::string name = taken.count(prefix(h) + n) ? "weighted_" + n : n;
      taken.insert(prefix(h) + name);
      h.weighted_names.push_back(name);
      names_.push_back(prefix(h) + name);
    }
  }
}

std::vector<std::vector<std::string>> CompiledOutputs::resolve_weighted_metrics(const nlohmann::json& spec) const {
  std::vector<std::vector<std::string>> out(heads_.size());
  if (spec.is_null()) return out;
  if (heads_.size() == 1) {  // Keras: a single output takes every entry, however nested
    if (!spec.is_array() && !spec.is_object()) throw ConfigError("compile: weighted_metrics must be a list");
    const nlohmann::json flat =
        spec.is_object() && !spec.contains("class_name") && spec.size() == 1 && spec.begin().key() == heads_[0].name
            ? spec.begin().value()
            : spec;
    for (const auto& e : flat.is_array() ? flat : nlohmann::json::array({flat})) {
      for (auto& m : metric_texts(e, heads_[0].name)) out[0].push_back(m);
    }
    return out;
  }
  const auto entries = per_output(spec, output_names_, "weighted_metrics");
  for (size_t i = 0; i < heads_.size(); ++i) out[i] = metric_texts(entries[i], heads_[i].name);
  return out;
}

void CompiledOutputs::resolve_losses(const CompileOptions& options) {
  const nlohmann::json& spec = options.output_losses();
  for (size_t i = 0; i < heads_.size(); ++i) heads_[i].loss = options.loss();
  if (!spec.is_null()) {
    const auto entries = per_output(spec, output_names_, "output_losses");
    for (size_t i = 0; i < heads_.size(); ++i) heads_[i].loss = loss_text(entries[i], heads_[i].name);
  }
  bool any = false;
  for (const auto& h : heads_) {
    if (h.loss.empty()) continue;
    try {
      check_loss(h.loss);
    } catch (const ConfigError& e) {
      if (heads_.size() == 1) throw;
      throw ConfigError("compile: the loss of output '" + h.name + "': " + e.what());
    }
    any = true;
  }
  if (!any) throw ConfigError("compile: no output has a loss (output_losses gives none)");
}

void CompiledOutputs::resolve_weights(const nlohmann::json& weights) {
  if (weights.is_null()) return;
  auto number = [](const nlohmann::json& w, const std::string& output) {
    if (!w.is_number() || !std::isfinite(w.get<double>())) {
      throw ConfigError("compile: the loss weight of output '" + output + "' must be a finite number, got " + w.dump());
    }
    return w.get<double>();
  };
  if (weights.is_number()) {
    if (heads_.size() > 1) {
      throw ConfigError("compile: loss_weights is one number but the model has " + std::to_string(heads_.size()) +
                        " outputs; Keras: a list or an object by output name (a number is for one output)");
    }
    heads_[0].weight = number(weights, heads_[0].name);
    return;
  }
  const auto entries = per_output(weights, output_names_, "loss_weights");
  for (size_t i = 0; i < heads_.size(); ++i) {
    if (entries[i].is_null() && !heads_[i].loss.empty()) {
      throw ConfigError("compile: loss_weights gives no weight for output '" + heads_[i].name +
                        "' (Keras: every output with a loss has one)");
    }
    if (!entries[i].is_null()) heads_[i].weight = number(entries[i], heads_[i].name);
  }
}

std::vector<std::vector<std::string>> CompiledOutputs::resolve_metrics(const CompileOptions& options) const {
  std::vector<std::vector<std::string>> out(heads_.size());
  if (!options.output_metrics().is_null()) {
    const auto entries = per_output(options.output_metrics(), output_names_, "output_metrics");
    for (size_t i = 0; i < heads_.size(); ++i) out[i] = metric_texts(entries[i], heads_[i].name);
    if (!options.metrics().empty()) {
      throw ConfigError(
          "compile: metrics and output_metrics are both given; give the metrics of a model with "
          "several outputs in output_metrics");
    }
    return out;
  }
  const auto& flat = options.metrics();
  if (heads_.size() == 1) {
    out[0] = flat;
  } else if (!flat.empty()) {
    if (flat.size() != heads_.size()) {
      throw ConfigError("compile: the model has " + std::to_string(heads_.size()) + " outputs (" +
                        joined(output_names_) + ") and metrics lists " + std::to_string(flat.size()) +
                        "; Keras 3: a flat metrics list gives one metric per output, in output order — give "
                        "output_metrics (a list per output or an object by output name) for more");
    }
    for (size_t i = 0; i < heads_.size(); ++i) out[i] = {flat[i]};
  }
  return out;
}

void CompiledOutputs::check_targets(size_t count) const {
  if (count == heads_.size()) return;
  throw ConfigError("the model has " + std::to_string(heads_.size()) + " outputs (" + joined(output_names_) +
                    ") but the batch has " + std::to_string(count) + " targets; give one per output, in output order");
}

at::Tensor CompiledOutputs::total_loss(const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& ys,
                                       const at::Tensor& sample_weight, const std::vector<at::Tensor>& masks,
                                       const at::Tensor& class_weight, std::vector<double>* state) const {
  check_targets(ys.size());
  at::Tensor total;
  for (size_t i = 0; i < heads_.size(); ++i) {
    const Head& h = heads_[i];
    if (h.loss.empty()) continue;
    const at::Tensor mask = i < masks.size() ? masks[i] : at::Tensor();
    const at::Tensor w = class_weight.defined() ? class_sample_weight(h.loss, ys[i], class_weight) : sample_weight;
    at::Tensor value = compute_loss(h.loss, outs[i], ys[i], h.from_logits && logits_, w, mask);
    if (state && h.logs_loss) {
      const double n = static_cast<double>(outs[i].size(0));
      (*state)[h.loss_offset] += value.item<double>() * n;
      (*state)[h.loss_offset + 1] += n;
    }
    if (h.weight != 1.0) value = value * h.weight;
    total = total.defined() ? total + value : value;
  }
  return total;
}

void CompiledOutputs::update(const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& ys,
                             std::vector<double>& state, const at::Tensor& sample_weight,
                             const at::Tensor& class_weight) const {
  check_targets(ys.size());
  if (state.size() != size_) state.assign(size_, 0.0);
  auto add = [&](const MetricSet& set, size_t offset, size_t i, const at::Tensor& w) {
    if (set.state_size() == 0) return;
    std::vector<double> part(set.state_size(), 0.0);
    set.update(outs[i], ys[i], part, w);
    for (size_t k = 0; k < part.size(); ++k) state[offset + k] += part[k];
  };
  for (size_t i = 0; i < heads_.size(); ++i) {
    const Head& h = heads_[i];
    add(*h.metrics, h.metric_offset, i, {});
    if (h.weighted->state_size() == 0) continue;
    // Keras 3: class_weight reaches the weighted metrics as the sample weights it becomes.
    const bool by_class = class_weight.defined() && !h.loss.empty();
    add(*h.weighted, h.weighted_offset, i, by_class ? class_sample_weight(h.loss, ys[i], class_weight) : sample_weight);
  }
}

Logs CompiledOutputs::results(const std::vector<double>& state, const std::string& prefix) const {
  Logs out;
  const bool several = heads_.size() > 1;
  const bool whole = state.size() == size_;
  auto slice = [&](size_t offset, const MetricSet& set) {
    std::vector<double> part;
    if (whole)
      part.assign(state.begin() + static_cast<std::ptrdiff_t>(offset),
                  state.begin() + static_cast<std::ptrdiff_t>(offset + set.state_size()));
    return part;
  };
  for (const Head& h : heads_) {
    const std::string head = prefix + (several ? h.name + "_" : "");
    for (auto& [name, value] : h.metrics->results(slice(h.metric_offset, *h.metrics), head)) out[name] = value;
    const Logs weighted = h.weighted->results(slice(h.weighted_offset, *h.weighted));
    for (size_t k = 0; k < h.weighted_names.size(); ++k)
      out[head + h.weighted_names[k]] = weighted.at(h.weighted->names()[k]);
    if (!h.logs_loss) continue;
    const double n = whole ? state[h.loss_offset + 1] : 0.0;
    out[prefix + h.name + "_loss"] = n > 0 ? state[h.loss_offset] / n : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

}  // namespace torchfit
