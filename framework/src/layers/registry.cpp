#include <torchfit/layers/registry.h>

#include <map>
#include <mutex>

#include <torchfit/layers/activation.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/dropout.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/max_pooling2d.h>

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
  if (!c.contains("input_shape") || c["input_shape"].is_null()) return std::nullopt;
  return c["input_shape"].get<Shape>();
}
std::string name_of(const Json& c) { return c.value("name", std::string()); }
torch::ExpandingArray<2> pair_of(const Json& v) {
  if (v.is_number_integer()) return torch::ExpandingArray<2>(v.get<int64_t>());
  auto p = v.get<std::vector<int64_t>>();
  if (p.size() != 2) throw std::invalid_argument("expected an int or a pair of ints");
  return torch::ExpandingArray<2>({p[0], p[1]});
}

void register_builtins(std::map<std::string, LayerFactory>& t) {
  t["Conv2D"] = [](const Json& c) -> std::shared_ptr<Layer> {
    Conv2DOptions o(c.at("filters").get<int64_t>(), pair_of(c.at("kernel_size")));
    if (c.contains("strides")) o.strides(pair_of(c["strides"]));
    if (c.contains("dilation_rate")) o.dilation_rate(pair_of(c["dilation_rate"]));
    o.padding(c.value("padding", "valid")).activation(c.value("activation", "linear"));
    o.use_bias(c.value("use_bias", true)).input_shape(opt_shape(c)).name(name_of(c));
    return std::make_shared<Conv2DImpl>(o);
  };
  t["Dense"] = [](const Json& c) -> std::shared_ptr<Layer> {
    DenseOptions o(c.at("units").get<int64_t>());
    o.activation(c.value("activation", "linear")).use_bias(c.value("use_bias", true));
    o.input_shape(opt_shape(c)).name(name_of(c));
    return std::make_shared<DenseImpl>(o);
  };
  t["MaxPooling2D"] = [](const Json& c) -> std::shared_ptr<Layer> {
    MaxPooling2DOptions o(c.contains("pool_size") ? pair_of(c["pool_size"]) : torch::ExpandingArray<2>(2));
    if (c.contains("strides") && !c["strides"].is_null()) {
      auto s = pair_of(c["strides"]);
      o.strides(std::vector<int64_t>{(*s)[0], (*s)[1]});
    }
    o.padding(c.value("padding", "valid")).input_shape(opt_shape(c)).name(name_of(c));
    return std::make_shared<MaxPooling2DImpl>(o);
  };
  t["Flatten"] = [](const Json& c) -> std::shared_ptr<Layer> {
    return std::make_shared<FlattenImpl>(FlattenOptions().input_shape(opt_shape(c)).name(name_of(c)));
  };
  t["Dropout"] = [](const Json& c) -> std::shared_ptr<Layer> {
    return std::make_shared<DropoutImpl>(DropoutOptions(c.at("rate").get<double>()).name(name_of(c)));
  };
  t["Activation"] = [](const Json& c) -> std::shared_ptr<Layer> {
    auto l = std::make_shared<ActivationImpl>(c.at("activation").get<std::string>(), name_of(c));
    l->set_declared_input_shape(opt_shape(c));
    return l;
  };
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
