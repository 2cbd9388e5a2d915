#include <torchfit/layers/input_layer.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

InputLayerImpl::InputLayerImpl(InputLayerOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  if (!options.input_shape() || options.input_shape()->empty()) {
    throw ConfigError(describe() + ": needs a shape, e.g. Input({32, 32, 3}) (H, W, C)");
  }
  set_declared_input_shape(options.input_shape());
}

Shape InputLayerImpl::build_impl(const Shape& in) { return in; }

nlohmann::json InputLayerImpl::config() const {
  nlohmann::json batch = nlohmann::json::array({nullptr});
  for (auto d : *options.input_shape()) batch.push_back(d);
  for (int64_t axis : options.unknown_axes()) batch.at(static_cast<size_t>(axis) + 1) = nullptr;  // Keras's None
  nlohmann::json c = {
      {"batch_input_shape", batch}, {"dtype", "float32"}, {"sparse", false}, {"ragged", false}, {"name", name()}};
  return c;
}

KerasTensor Input(const Shape& shape, const std::string& name) {
  return input_tensor_of(std::make_shared<InputLayerImpl>(InputLayerOptions().input_shape(shape).name(name)));
}

KerasTensor input_tensor_of(const std::shared_ptr<InputLayerImpl>& layer) {
  const Shape shape = *layer->options.input_shape();
  layer->build(shape);
  auto node = std::make_shared<Node>();
  node->layer = layer;
  node->output_shapes = {shape};
  return KerasTensor(std::move(node), 0, shape);
}

namespace {

// A Keras batch shape [null, d1, …] → the per-sample shape (d1, …).
Shape per_sample(const nlohmann::json& batch, const std::string& who, const std::string& field) {
  if (!batch.is_array() || batch.size() < 2) {
    throw ConfigError(who + ": field '" + field + "' must be [null, d1, ...], got " + batch.dump());
  }
  Shape s;
  for (size_t i = 1; i < batch.size(); ++i) {
    if (!batch[i].is_number_integer()) {
      throw ConfigError(who + ": field '" + field + "' needs every dimension but the batch known, got " + batch.dump());
    }
    s.push_back(batch[i].get<int64_t>());
  }
  return s;
}

std::shared_ptr<Layer> input_layer_from_config(const nlohmann::json& config) {
  LayerConfigReader reader(config, "InputLayer");
  InputLayerOptions options;
  options.name(reader.name());
  options.input_shape(reader.input_shape());
  for (const char* field : {"batch_input_shape", "batch_shape"}) {
    if (reader.has(field)) options.input_shape(per_sample(config[field], reader.who(), field));
  }
  const auto dtype = reader.optional<std::string>("dtype", "float32");
  if (dtype != "float32") throw ConfigError(reader.who() + ": dtype '" + dtype + "' is not supported (float32)");
  for (const char* flag : {"sparse", "ragged"}) {
    if (reader.optional<bool>(flag, false)) throw ConfigError(reader.who() + ": " + flag + " inputs are not supported");
  }
  reader.has("input_tensor");  // Keras 3 writes null
  reader.has("optional");
  reader.finish();
  auto layer = std::make_shared<InputLayerImpl>(std::move(options));
  layer->build(*layer->options.input_shape());
  return layer;
}

}  // namespace

LayerRegistration torchfit_layer_registration_InputLayer() { return {"InputLayer", input_layer_from_config}; }
[[maybe_unused]] static const bool torchfit_layer_registered_InputLayer =
    register_layer(torchfit_layer_registration_InputLayer());

}  // namespace torchfit
