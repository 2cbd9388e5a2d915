// Keras weights → torchfit parameters (keras_import.h): layouts and the Theano flip. A Dense kernel applies
// as stored: torchfit's Flatten gives Keras's (H, W, C) order (flatten.h), on every path to the Dense.
#include <map>

#include <torch/torch.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/conv2d_transpose.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/depthwise_conv2d.h>
#include <torchfit/layers/layer_normalization.h>
#include <torchfit/layers/separable_conv2d.h>

#include "keras_layer_config.h"

namespace torchfit::keras {
namespace {

using nlohmann::json;

// What the mapping of one layer knows: the Keras spec, its stored weights and the model's facts.
struct WeightSource {
  const json& spec;                 // {"class_name", "config"}
  const KerasLayerWeights& stored;  // in Keras's order and layout
  const KerasFile& file;
  bool keras1_th;  // a Keras 1 kernel stored (out, in, kh, kw)
  bool flip;       // Theano-trained: convolution kernels flipped in both spatial axes

  std::string who() const {
    return file.path + ": layer '" + stored.layer + "' (" + spec.value("class_name", std::string("?")) + ")";
  }
  [[noreturn]] void refuse(const std::string& why) const { throw ConfigError(who() + ": " + why); }
  const at::Tensor& at(size_t i) const { return stored.values[i]; }
};

// Copies `value` (already in torchfit's layout) into `param`, which must have its shape.
void assign(const WeightSource& src, at::Tensor& param, const at::Tensor& value, const std::string& what) {
  if (!param.defined()) src.refuse("the model layer has no " + what);
  if (param.sizes() != value.sizes()) {
    src.refuse(what + " has shape " + c10::str(value.sizes()) + " in torchfit's layout; the layer expects " +
               c10::str(param.sizes()));
  }
  torch::NoGradGuard no_grad;
  param.copy_(value.to(param.scalar_type()));
}

void expect_count(const WeightSource& src, size_t n) {
  if (src.stored.values.size() != n) {
    src.refuse("the file holds " + std::to_string(src.stored.values.size()) + " weights, the layer takes " +
               std::to_string(n));
  }
}

// A Conv2D kernel in torchfit's (out, in, kh, kw).
at::Tensor conv_kernel(const WeightSource& src) {
  const at::Tensor& k = src.at(0);
  if (k.dim() != 4) src.refuse("the kernel has " + std::to_string(k.dim()) + " dimensions, 4 expected");
  at::Tensor out = src.keras1_th ? k : k.permute({3, 2, 0, 1});
  return src.flip ? out.flip({2, 3}) : out;
}

template <typename Conv>
void map_conv(Conv& layer, const WeightSource& src, const at::Tensor& kernel) {
  expect_count(src, layer.bias.defined() ? 2 : 1);
  assign(src, layer.kernel, kernel, "kernel");
  if (layer.bias.defined()) assign(src, layer.bias, src.at(1), "bias");
}

void map_conv2d(Layer& l, const WeightSource& src) {
  auto& layer = dynamic_cast<Conv2DImpl&>(l);
  map_conv(layer, src, conv_kernel(src));
}

// Conv2DTranspose: Keras (kh, kw, out, in) → LibTorch's conv_transpose2d (in, out, kh, kw), the same
// permutation as a Conv2D kernel's. Keras 2+ only (Keras 1's Deconvolution2D is not read).
void map_conv2d_transpose(Layer& l, const WeightSource& src) {
  auto& layer = dynamic_cast<Conv2DTransposeImpl&>(l);
  map_conv(layer, src, conv_kernel(src));
}

// A depthwise kernel (kh, kw, in, mult) → (in·mult, 1, kh, kw): output channel c·mult + m, as a grouped
// convolution.
at::Tensor depthwise_kernel(const WeightSource& src) {
  const at::Tensor& k = src.at(0);
  if (k.dim() != 4) src.refuse("the depthwise kernel has " + std::to_string(k.dim()) + " dimensions, 4 expected");
  at::Tensor t = k.permute({2, 3, 0, 1}).reshape({k.size(2) * k.size(3), 1, k.size(0), k.size(1)});
  return src.flip ? t.flip({2, 3}) : t;
}

void map_depthwise_conv2d(Layer& l, const WeightSource& src) {
  auto& layer = dynamic_cast<DepthwiseConv2DImpl&>(l);
  map_conv(layer, src, depthwise_kernel(src));
}

// SeparableConv2D: depthwise_kernel (kh, kw, in, mult) as DepthwiseConv2D's, pointwise_kernel
// (1, 1, in·mult, out) → (out, in·mult, 1, 1), bias.
void map_separable_conv2d(Layer& l, const WeightSource& src) {
  auto& layer = dynamic_cast<SeparableConv2DImpl&>(l);
  expect_count(src, layer.bias.defined() ? 3 : 2);
  const at::Tensor& p = src.at(1);
  if (p.dim() != 4) src.refuse("the pointwise kernel has " + std::to_string(p.dim()) + " dimensions, 4 expected");
  assign(src, layer.depthwise_kernel, depthwise_kernel(src), "depthwise_kernel");
  assign(src, layer.pointwise_kernel, p.permute({3, 2, 0, 1}), "pointwise_kernel");
  if (layer.bias.defined()) assign(src, layer.bias, src.at(2), "bias");
}

// LayerNormalization: gamma (when scale), beta (when center), in Keras's layout already.
void map_layer_normalization(Layer& l, const WeightSource& src) {
  auto& layer = dynamic_cast<LayerNormalizationImpl&>(l);
  expect_count(src, (layer.gamma.defined() ? 1 : 0) + (layer.beta.defined() ? 1 : 0));
  size_t i = 0;
  if (layer.gamma.defined()) assign(src, layer.gamma, src.at(i++), "gamma");
  if (layer.beta.defined()) assign(src, layer.beta, src.at(i), "beta");
}

void map_dense(Layer& l, const WeightSource& src) {
  auto& layer = dynamic_cast<DenseImpl&>(l);
  expect_count(src, layer.bias.defined() ? 2 : 1);
  const at::Tensor& k = src.at(0);  // (in, out)
  if (k.dim() != 2) src.refuse("the kernel has " + std::to_string(k.dim()) + " dimensions, 2 expected");
  const at::Tensor kernel = k.t();
  assign(src, layer.kernel, kernel, "kernel");
  if (layer.bias.defined()) assign(src, layer.bias, src.at(1), "bias");
}

void map_batch_normalization(Layer& l, const WeightSource& src) {
  auto& layer = dynamic_cast<BatchNormalizationImpl&>(l);
  // Keras order: gamma (scale), beta (center), moving_mean, moving_variance (Keras 1: running_std, which
  // holds the variance).
  std::vector<std::pair<at::Tensor*, const char*>> params;
  if (layer.gamma.defined()) params.emplace_back(&layer.gamma, "gamma");
  if (layer.beta.defined()) params.emplace_back(&layer.beta, "beta");
  params.emplace_back(&layer.moving_mean, "moving_mean");
  params.emplace_back(&layer.moving_variance, "moving_variance");
  expect_count(src, params.size());
  for (size_t i = 0; i < params.size(); ++i) assign(src, *params[i].first, src.at(i), params[i].second);
}

using Mapper = void (*)(Layer&, const WeightSource&);

// torchfit class (of the built layer) → mapping of its Keras weights (layers without weights need none).
const std::map<std::string, Mapper>& mappers() {
  static const std::map<std::string, Mapper> table = {
      {"Conv2D", map_conv2d},
      {"DepthwiseConv2D", map_depthwise_conv2d},
      {"Dense", map_dense},
      {"BatchNormalization", map_batch_normalization},
      {"Conv2DTranspose", map_conv2d_transpose},
      {"SeparableConv2D", map_separable_conv2d},
      {"LayerNormalization", map_layer_normalization},
  };
  return table;
}

bool flips_kernels(const KerasFile& file, const KerasImportOptions& options, bool channels_first) {
  if (file.keras_major() != 1) return false;  // Keras 2's Theano backend convolves without the flip
  std::string backend = !options.keras1_backend.empty() ? options.keras1_backend : file.backend;
  if (backend.empty()) backend = channels_first ? "theano" : "tensorflow";
  if (backend != "theano" && backend != "tensorflow") {
    throw ConfigError(file.path + ": unknown Keras 1 backend \"" + backend + "\" (theano or tensorflow)");
  }
  return backend == "theano";
}

}  // namespace

void load_keras_weights(const KerasFile& file, const LayerLookup& get_layer, const KerasImportOptions& options) {
  const auto layers = keras_config_layers(file.model_config);
  const bool channels_first = keras_model_is_channels_first(file.model_config);
  const bool keras1_th = file.keras_major() == 1 && channels_first;
  const bool flip = flips_kernels(file, options, channels_first);
  size_t used = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const json& spec = layers[i];
    const std::string cls = spec.value("class_name", "");
    const std::string name = spec["config"].value("name", "");
    if (cls == "InputLayer") continue;
    const KerasLayerWeights* stored = file.find(name);
    std::shared_ptr<Layer> layer = get_layer(name);
    if (!stored) {
      if (layer->count_params() > 0) {
        throw ConfigError(file.path + ": layer '" + name + "' (" + cls +
                          ") has weights but the file holds none for it");
      }
      continue;
    }
    ++used;
    const auto it = mappers().find(layer->class_name());  // torchfit's class: Keras 1 names and aliases read
    WeightSource src{spec, *stored, file, keras1_th, flip};
    if (it == mappers().end()) src.refuse("torchfit cannot map this class's weights");
    it->second(*layer, src);
  }
  if (used != file.weights.size()) {
    for (const auto& w : file.weights) {
      bool found = false;
      for (const auto& spec : layers) found = found || spec["config"].value("name", "") == w.layer;
      if (!found) throw ConfigError(file.path + ": weights for layer '" + w.layer + "', which the model config lacks");
    }
  }
}

bool keras_model_is_channels_first(const json& keras_model_config) {
  const auto layers = keras_config_layers(keras_model_config);
  return keras_config::keras1_channels_first(json(layers));
}

Model build_keras_model(const KerasFile& file) {
  try {
    return model_from_json(file.model_config);
  } catch (const ConfigError& e) {
    throw ConfigError(file.path + ": " + e.what());
  }
}

Model load_keras_model(const std::string& path, const std::string& architecture_json,
                       const KerasImportOptions& options) {
  const KerasFile file = read_keras_file(path, architecture_json);
  Model model = build_keras_model(file);
  load_keras_weights(
      file, [&](const std::string& n) { return model->get_layer(n); }, options);
  model->eval();
  return model;
}

}  // namespace torchfit::keras
