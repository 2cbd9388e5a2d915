#include <torchfit/model/sequential.h>

#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/registry.h>

#include "summary_text.h"

namespace torchfit {
using summary_text::row;
using summary_text::thousands;

SequentialImpl::SequentialImpl(std::string name) : ModelImpl(std::move(name)) { kind_ = "Sequential"; }

void SequentialImpl::add(std::shared_ptr<Layer> layer) {
  if (!layer) throw ConfigError("Sequential::add: null layer");
  // Name: user-given must be unique; automatic names count per class as Keras (conv2d, conv2d_1, …).
  if (layer->name().empty()) {
    layer->set_name(automatic_layer_name(layer->class_name(), [&](const std::string& n) {
      for (const auto& l : layers_) {
        if (l->name() == n) return true;
      }
      return false;
    }));
  } else {
    for (const auto& l : layers_) {
      if (l->name() == layer->name()) {
        throw ConfigError("Sequential '" + name_ + "': layer name '" + layer->name() +
                          "' is already used; names must be unique");
      }
    }
  }
  if (auto input = std::dynamic_pointer_cast<InputLayerImpl>(layer)) {
    // Keras: an InputLayer first gives the stack its input; it is not one of model.layers.
    if (!layers_.empty() || input_.defined()) {
      throw ConfigError("Sequential '" + name_ + "': InputLayer '" + layer->name() + "' can only be the first layer");
    }
    input_ = input_tensor_of(input);
    return;
  }
  if (layers_.empty() && !input_.defined()) {
    if (!layer->declared_input_shape()) {
      throw ConfigError("layer '" + layer->name() + "' (" + layer->class_name() +
                        ") is the first layer of Sequential '" + name_ +
                        "' and needs input_shape, e.g. .input_shape({150, 150, 3}) (H, W, C)");
    }
    input_ = input_tensor_of(std::make_shared<InputLayerImpl>(
        InputLayerOptions().input_shape(*layer->declared_input_shape()).name(layer->name() + "_input")));
  }
  if (layers_.empty() && !layer->declared_input_shape()) layer->set_declared_input_shape(input_.shape());
  KerasTensor out = layer->call(layers_.empty() ? input_ : output_);
  output_ = out;
  set_graph({input_}, {output_}, /*include_input_layers=*/false);
}

std::string SequentialImpl::summary(int line_length) const {
  if (line_length <= 0) line_length = 65;
  // Keras 2.6 layout: positions [.45, .85, 1.0] of line_length → 29, 55, 65 for 65.
  const std::vector<int> pos = {static_cast<int>(line_length * 0.45), static_cast<int>(line_length * 0.85),
                                line_length};
  std::ostringstream os;
  os << "Model: \"" << name_ << "\"\n";
  os << std::string(static_cast<size_t>(line_length), '_') << "\n";
  os << row({"Layer (type)", "Output Shape", "Param #"}, pos) << "\n";
  os << std::string(static_cast<size_t>(line_length), '=') << "\n";
  for (size_t i = 0; i < layers_.size(); ++i) {
    const auto& l = layers_[i];
    os << row({l->name() + " (" + l->class_name() + ")", format_shape(l->output_shape()),
               std::to_string(l->count_params())},
              pos)
       << "\n";
    os << std::string(static_cast<size_t>(line_length), i + 1 == layers_.size() ? '=' : '_') << "\n";
  }
  if (layers_.empty()) os << std::string(static_cast<size_t>(line_length), '=') << "\n";
  os << "Total params: " << thousands(count_params()) << "\n";
  os << "Trainable params: " << thousands(trainable_params()) << "\n";
  os << "Non-trainable params: " << thousands(non_trainable_params()) << "\n";
  if (dtype_policy().is_mixed()) os << "Dtype policy: " << dtype_policy().name() << "\n";  // float32: Keras's text
  os << std::string(static_cast<size_t>(line_length), '_') << "\n";
  return os.str();
}

nlohmann::json SequentialImpl::to_json() const {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : layers_) layers.push_back(layer_to_json(*l));
  nlohmann::json config = {{"name", name_}, {"layers", layers}};
  config["dtype_policy"] = dtype_policy().name();  // always: a float32 model stays float32 under any global policy
  return {{"format_version", kModelFormatVersion}, {"class_name", "Sequential"}, {"config", config}};
}

namespace {
// Adds config.layers[index]; an error names the layer by index, name and class:
// "config.layers[2] ('dense_1', Dense): …".
void add_layer_from_json(SequentialImpl& model, const nlohmann::json& spec, size_t index) {
  std::string who = "config.layers[" + std::to_string(index) + "]";
  if (!spec.is_object())
    throw ConfigError(who + ": expected a layer object {\"class_name\": ..., \"config\": ...}, got " + spec.dump());
  const auto& config =
      spec.contains("config") && spec["config"].is_object() ? spec["config"] : nlohmann::json::object();
  const auto& name = config.contains("name") && config["name"].is_string() ? config["name"].get<std::string>() : "?";
  const auto& cls =
      spec.contains("class_name") && spec["class_name"].is_string() ? spec["class_name"].get<std::string>() : "?";
  who += " ('" + name + "', " + cls + ")";
  try {
    model.add(layer_from_json(spec));
  } catch (const std::exception& e) {
    std::string what = e.what();
    const std::string same = "layer '" + name + "' (" + cls + "): ";  // layer_from_json's own prefix
    if (what.rfind(same, 0) == 0) what = what.substr(same.size());
    throw ConfigError(who + ": " + what);
  }
}
}  // namespace

std::shared_ptr<SequentialImpl> SequentialImpl::from_json(const nlohmann::json& json) {
  if (!json.is_object() || json.value("class_name", std::string()) != "Sequential") {
    throw ConfigError("model JSON: expected {\"class_name\": \"Sequential\", ...}");
  }
  const int version = json.value("format_version", 0);
  if (version < 1 || version > kModelFormatVersion) {
    throw ConfigError("model JSON: unsupported format_version " + std::to_string(version) +
                      " (this torchfit reads 1.." + std::to_string(kModelFormatVersion) + ")");
  }
  const auto& config = json.at("config");
  auto model = std::make_shared<SequentialImpl>(config.value("name", std::string("sequential")));
  if (!config.contains("layers") || !config["layers"].is_array()) {
    throw ConfigError("model JSON: config.layers must be an array");
  }
  const auto& layers = config["layers"];
  for (size_t i = 0; i < layers.size(); ++i) add_layer_from_json(*model, layers[i], i);
  if (model->layers().empty()) throw ConfigError("model JSON: config.layers has no layer");
  if (config.contains("dtype_policy")) {
    if (!config["dtype_policy"].is_string()) throw ConfigError("model JSON: config.dtype_policy must be a string");
    model->set_dtype_policy(config["dtype_policy"].get<std::string>());
  }
  return model;
}

}  // namespace torchfit
