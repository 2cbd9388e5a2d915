#include <torchfit/model/sequential.h>

#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/layers/registry.h>

namespace torchfit {
namespace {

std::string thousands(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

// Keras print_row: each field is cut to fit its column and padded with spaces to the next position.
std::string row(const std::vector<std::string>& fields, const std::vector<int>& positions) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line = line.substr(0, line.size() - 1) + " ";  // Keras: line[:-1] + ' '
    line += fields[i];
    line = line.substr(0, static_cast<size_t>(positions[i]));
    line += std::string(static_cast<size_t>(positions[i]) - line.size(), ' ');
  }
  return line;  // padded to line_length with spaces, exactly as Keras prints it
}

}  // namespace

SequentialImpl::SequentialImpl(std::string name) : torch::nn::Module("Sequential"), name_(std::move(name)) {}

void SequentialImpl::add(std::shared_ptr<Layer> layer) {
  if (!layer) throw ConfigError("Sequential::add: null layer");
  // Name: user-given must be unique; automatic names count per class as Keras (conv2d, conv2d_1, …).
  if (layer->name().empty()) {
    const std::string base = keras_snake_case(layer->class_name());
    int count = 0;
    std::string candidate = base;
    auto taken = [&](const std::string& n) {
      for (const auto& l : layers_) {
        if (l->name() == n) return true;
      }
      return false;
    };
    while (taken(candidate)) candidate = base + "_" + std::to_string(++count);
    layer->set_name(candidate);
  } else {
    for (const auto& l : layers_) {
      if (l->name() == layer->name()) {
        throw ConfigError("Sequential '" + name_ + "': layer name '" + layer->name() +
                          "' is already used; names must be unique");
      }
    }
  }
  Shape in;
  if (layers_.empty()) {
    if (!layer->declared_input_shape()) {
      throw ConfigError("layer '" + layer->name() + "' (" + layer->class_name() +
                        ") is the first layer of Sequential '" + name_ +
                        "' and needs input_shape, e.g. .input_shape({150, 150, 3}) (H, W, C)");
    }
    in = *layer->declared_input_shape();
  } else {
    in = layers_.back()->output_shape();
  }
  layer->build(in);
  register_module(layer->name(), layer);
  layers_.push_back(std::move(layer));
}

void SequentialImpl::set_memory_format(const std::string& name) {
  if (name != "auto" && name != "channels_last" && name != "contiguous")
    throw ConfigError("memory_format must be auto, channels_last or contiguous, got \"" + name + "\"");
  memory_format_ = name;
}

bool SequentialImpl::uses_channels_last(const c10::Device& device) const {
  return memory_format_ == "channels_last" || (memory_format_ == "auto" && device.is_cpu());
}

void SequentialImpl::check_input(const at::Tensor& x) const {
  const Shape& keras = input_shape();
  const Shape expected = to_tensor_shape(keras);
  const auto got = x.sizes();
  if (static_cast<size_t>(x.dim()) == expected.size() + 1 &&
      std::equal(expected.begin(), expected.end(), got.begin() + 1)) {
    return;
  }
  std::string tensor = "(N", given = "(";
  for (int64_t e : expected) tensor += ", " + std::to_string(e);
  for (size_t i = 0; i < got.size(); ++i) given += (i ? ", " : "") + std::to_string(got[i]);
  throw ConfigError("Sequential '" + name_ + "': an input tensor of shape " + given +
                    ") does not fit the model's input_shape " + format_shape(keras) + ", which takes tensors " +
                    tensor + ")" + (keras.size() == 3 ? " (N, C, H, W)" : ""));
}

at::Tensor SequentialImpl::prepare_input(const at::Tensor& x) const {
  check_input(x);
  const bool channels_last = x.dim() == 4 && uses_channels_last(x.device());
  // A mixed policy: the layers take their input in the compute dtype (Keras casts a layer's floating
  // inputs); one pass converts layout and dtype together.
  const bool cast = dtype_policy_.is_mixed() && at::isFloatingType(x.scalar_type());
  if (!cast) return channels_last ? x.contiguous(at::MemoryFormat::ChannelsLast) : x;
  return x.to(dtype_policy_.compute_dtype(), /*non_blocking=*/false, /*copy=*/false,
              channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Preserve);
}

bool SequentialImpl::pools_before_relu(size_t i) const {
  // Any layer whose output activation is relu (Conv2D, DepthwiseConv2D, Activation("relu"), …): by the
  // layer contract forward_without_activation is forward minus that ReLU.
  return pool_before_relu_ && i + 1 < layers_.size() && layers_[i]->output_activation() == "relu" &&
         dynamic_cast<const MaxPooling2DImpl*>(layers_[i + 1].get()) != nullptr;
}

at::Tensor SequentialImpl::run_layers(at::Tensor h, bool last_without_activation) {
  const size_t n = layers_.size();
  for (size_t i = 0; i < n; ++i) {
    if (pools_before_relu(i)) {
      // max(relu(a), relu(b), …) = relu(max(a, b, …)) and the gradient reaches the same element, so the
      // ReLU and its backward run on the pooled tensor (4× smaller for 2×2 pooling).
      h = layers_[i + 1]->forward(layers_[i]->forward_without_activation(h));
      h = apply_activation("relu", h, /*inplace=*/true);  // the pool has no activation to leave out
      ++i;
      continue;
    }
    h = (last_without_activation && i + 1 == n) ? layers_[i]->forward_without_activation(h) : layers_[i]->forward(h);
  }
  return h;
}

at::Tensor SequentialImpl::run(const at::Tensor& x, bool logits) {
  const bool mixed = dtype_policy_.is_mixed();
  at::Tensor h;
  {
    mixed_precision::AutocastScope autocast(dtype_policy_, x.device());
    h = run_layers(prepare_input(x), logits || mixed);
  }
  if (mixed) {
    // Keras's mixed-precision rule: the output activation (softmax/sigmoid) and the loss in float32.
    h = h.to(at::kFloat);
    if (!logits) h = apply_activation(output_activation(), h);
  }
  return h.dim() == 4 ? h.contiguous() : h;
}

at::Tensor SequentialImpl::forward(const at::Tensor& x) { return run(x, false); }

at::Tensor SequentialImpl::forward_logits(const at::Tensor& x) { return run(x, true); }

std::string SequentialImpl::output_activation() const {
  return layers_.empty() ? "linear" : layers_.back()->output_activation();
}

std::shared_ptr<Layer> SequentialImpl::get_layer(const std::string& name) const {
  std::string known;
  for (const auto& l : layers_) {
    if (l->name() == name) return l;
    known += (known.empty() ? "" : ", ") + l->name();
  }
  throw ConfigError("no layer named '" + name + "' in Sequential '" + name_ + "' (layers: " + known + ")");
}

const Shape& SequentialImpl::input_shape() const {
  if (layers_.empty()) throw ConfigError("Sequential '" + name_ + "' has no layers");
  return layers_.front()->input_shape();
}

const Shape& SequentialImpl::output_shape() const {
  if (layers_.empty()) throw ConfigError("Sequential '" + name_ + "' has no layers");
  return layers_.back()->output_shape();
}

int64_t SequentialImpl::count_params() const { return trainable_params() + non_trainable_params(); }
int64_t SequentialImpl::trainable_params() const {
  int64_t n = 0;
  for (const auto& l : layers_) n += l->trainable_params();
  return n;
}
int64_t SequentialImpl::non_trainable_params() const {
  int64_t n = 0;
  for (const auto& l : layers_) n += l->non_trainable_params();
  return n;
}
int64_t SequentialImpl::flops_per_sample() const {
  int64_t n = 0;
  for (const auto& l : layers_) n += l->flops_per_sample();
  return n;
}

int64_t SequentialImpl::train_flops_per_sample() const {
  if (layers_.empty()) return 0;
  return 3 * flops_per_sample() - layers_.front()->flops_per_sample();
}

std::string SequentialImpl::summary(int line_length) const {
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
  if (dtype_policy_.is_mixed()) os << "Dtype policy: " << dtype_policy_.name() << "\n";  // float32: Keras's text
  os << std::string(static_cast<size_t>(line_length), '_') << "\n";
  return os.str();
}

void SequentialImpl::print_summary(std::ostream& os) const { os << summary(); }

nlohmann::json SequentialImpl::to_json() const {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : layers_) layers.push_back(layer_to_json(*l));
  nlohmann::json config = {{"name", name_}, {"layers", layers}};
  config["dtype_policy"] = dtype_policy_.name();  // always: a float32 model stays float32 under any global policy
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
  if (config.contains("dtype_policy")) {
    if (!config["dtype_policy"].is_string()) throw ConfigError("model JSON: config.dtype_policy must be a string");
    model->set_dtype_policy(config["dtype_policy"].get<std::string>());
  }
  return model;
}

}  // namespace torchfit
