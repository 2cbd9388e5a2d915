#include <torchfit/layers/registry.h>

#include <map>
#include <mutex>

#include <torchfit/layers/activation.h>
#include <torchfit/layers/advanced_activations.h>
#include <torchfit/layers/average_pooling2d.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/depthwise_conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/dropout.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/global_pooling2d.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/layers/reshape.h>

namespace torchfit {
namespace {

using Json = nlohmann::json;

std::map<std::string, LayerFactory>& table() {
  static std::map<std::string, LayerFactory> t;
  return t;
}
std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}

std::optional<Shape> opt_shape(const Json& c) {
  if (!c.is_object() || !c.contains("input_shape") || c["input_shape"].is_null()) return std::nullopt;
  return c["input_shape"].get<Shape>();
}

std::vector<int64_t> vec2(const torch::ExpandingArray<2>& a) { return {(*a)[0], (*a)[1]}; }

// Each factory reads its fields through LayerConfigReader (errors name the layer and the field) and
// rejects unknown fields with finish().
template <typename Make>
LayerFactory factory(const char* cls, Make make) {
  return [cls, make](const Json& c) -> std::shared_ptr<Layer> {
    LayerConfigReader r(c, cls);
    std::shared_ptr<Layer> layer = make(r);
    r.finish();
    return layer;
  };
}

void register_builtins(std::map<std::string, LayerFactory>& t) {
  t["Conv2D"] = factory("Conv2D", [](LayerConfigReader& r) {
    r.required<Json>("kernel_size");
    Conv2DOptions o(r.required<int64_t>("filters"), r.pair("kernel_size", 0));
    o.strides(r.pair("strides", 1)).padding(r.optional<std::string>("padding", "valid"));
    o.dilation_rate(r.pair("dilation_rate", 1)).activation(r.optional<std::string>("activation", "linear"));
    o.use_bias(r.optional("use_bias", true)).input_shape(r.input_shape()).name(r.name());
    return std::make_shared<Conv2DImpl>(o);
  });
  t["DepthwiseConv2D"] = factory("DepthwiseConv2D", [](LayerConfigReader& r) {
    r.required<Json>("kernel_size");
    DepthwiseConv2DOptions o(r.pair("kernel_size", 0));
    o.depth_multiplier(r.optional<int64_t>("depth_multiplier", 1)).strides(r.pair("strides", 1));
    o.padding(r.optional<std::string>("padding", "valid")).dilation_rate(r.pair("dilation_rate", 1));
    o.activation(r.optional<std::string>("activation", "linear")).use_bias(r.optional("use_bias", true));
    o.input_shape(r.input_shape()).name(r.name());
    return std::make_shared<DepthwiseConv2DImpl>(o);
  });
  t["Dense"] = factory("Dense", [](LayerConfigReader& r) {
    DenseOptions o(r.required<int64_t>("units"));
    o.activation(r.optional<std::string>("activation", "linear")).use_bias(r.optional("use_bias", true));
    o.input_shape(r.input_shape()).name(r.name());
    return std::make_shared<DenseImpl>(o);
  });
  t["MaxPooling2D"] = factory("MaxPooling2D", [](LayerConfigReader& r) {
    MaxPooling2DOptions o(r.pair("pool_size", 2));
    if (!r.optional<Json>("strides", nullptr).is_null()) o.strides(vec2(r.pair("strides", 0)));
    o.padding(r.optional<std::string>("padding", "valid")).input_shape(r.input_shape()).name(r.name());
    return std::make_shared<MaxPooling2DImpl>(o);
  });
  t["AveragePooling2D"] = factory("AveragePooling2D", [](LayerConfigReader& r) {
    AveragePooling2DOptions o(r.pair("pool_size", 2));
    if (!r.optional<Json>("strides", nullptr).is_null()) o.strides(vec2(r.pair("strides", 0)));
    o.padding(r.optional<std::string>("padding", "valid")).input_shape(r.input_shape()).name(r.name());
    return std::make_shared<AveragePooling2DImpl>(o);
  });
  t["GlobalAveragePooling2D"] = factory("GlobalAveragePooling2D", [](LayerConfigReader& r) {
    return std::make_shared<GlobalAveragePooling2DImpl>(
        GlobalPooling2DOptions().input_shape(r.input_shape()).name(r.name()));
  });
  t["GlobalMaxPooling2D"] = factory("GlobalMaxPooling2D", [](LayerConfigReader& r) {
    return std::make_shared<GlobalMaxPooling2DImpl>(GlobalPooling2DOptions().input_shape(r.input_shape()).name(r.name()));
  });
  t["Flatten"] = factory("Flatten", [](LayerConfigReader& r) {
    return std::make_shared<FlattenImpl>(FlattenOptions().input_shape(r.input_shape()).name(r.name()));
  });
  t["Reshape"] = factory("Reshape", [](LayerConfigReader& r) {
    return std::make_shared<ReshapeImpl>(
        ReshapeOptions(r.required<Shape>("target_shape")).input_shape(r.input_shape()).name(r.name()));
  });
  t["Dropout"] = factory("Dropout", [](LayerConfigReader& r) {
    auto l = std::make_shared<DropoutImpl>(DropoutOptions(r.required<double>("rate")).name(r.name()));
    l->set_declared_input_shape(r.input_shape());
    return l;
  });
  t["BatchNormalization"] = factory("BatchNormalization", [](LayerConfigReader& r) {
    BatchNormalizationOptions o;
    o.momentum(r.optional("momentum", 0.99)).epsilon(r.optional("epsilon", 1e-3));
    o.center(r.optional("center", true)).scale(r.optional("scale", true));
    o.input_shape(r.input_shape()).name(r.name());
    return std::make_shared<BatchNormalizationImpl>(o);
  });
  t["Activation"] = factory("Activation", [](LayerConfigReader& r) {
    auto l = std::make_shared<ActivationImpl>(r.required<std::string>("activation"), r.name());
    l->set_declared_input_shape(r.input_shape());
    return l;
  });
  t["LeakyReLU"] = factory("LeakyReLU", [](LayerConfigReader& r) {
    return std::make_shared<LeakyReLUImpl>(
        LeakyReLUOptions().alpha(r.optional("alpha", 0.3)).input_shape(r.input_shape()).name(r.name()));
  });
  t["ELU"] = factory("ELU", [](LayerConfigReader& r) {
    return std::make_shared<ELUImpl>(ELUOptions().alpha(r.optional("alpha", 1.0)).input_shape(r.input_shape()).name(r.name()));
  });
}

std::map<std::string, LayerFactory>& registry() {
  static bool once = [] {
    register_builtins(table());
    return true;
  }();
  (void)once;
  return table();
}

}  // namespace

void register_layer(const std::string& class_name, LayerFactory factory) {
  std::lock_guard<std::mutex> lock(table_mutex());
  registry()[class_name] = std::move(factory);
}

std::vector<std::string> registered_layers() {
  std::lock_guard<std::mutex> lock(table_mutex());
  std::vector<std::string> names;
  for (const auto& [k, v] : registry()) names.push_back(k);
  return names;
}

std::shared_ptr<Layer> layer_from_json(const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("class_name") || !spec["class_name"].is_string()) {
    throw ConfigError("layer spec must be an object with a string \"class_name\": " + spec.dump());
  }
  const auto cls = spec["class_name"].get<std::string>();
  const Json config = spec.value("config", Json::object());
  LayerFactory factory;
  {
    std::lock_guard<std::mutex> lock(table_mutex());
    auto it = registry().find(cls);
    if (it == registry().end()) {
      std::string known;
      for (const auto& [k, v] : registry()) known += (known.empty() ? "" : ", ") + k;
      throw ConfigError("unknown layer class '" + cls + "' (known: " + known + ")");
    }
    factory = it->second;
  }
  const std::string who = "layer '" + config.value("name", std::string("?")) + "' (" + cls + ")";
  try {
    auto layer = factory(config);
    // input_shape is a base Layer argument: restore it for every class, including user layers.
    if (auto shape = opt_shape(config)) layer->set_declared_input_shape(shape);
    return layer;
  } catch (const ConfigError&) {
    throw;
  } catch (const Json::out_of_range& e) {
    throw ConfigError(who + ": missing field in config: " + e.what());
  } catch (const std::exception& e) {
    throw ConfigError(who + ": bad field in config " + config.dump() + ": " + e.what());
  }
}

nlohmann::json layer_to_json(const Layer& layer) {
  return {{"class_name", layer.class_name()}, {"config", layer.config()}};
}

}  // namespace torchfit
