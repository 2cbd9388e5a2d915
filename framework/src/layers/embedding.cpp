#include <torchfit/layers/embedding.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

EmbeddingImpl::EmbeddingImpl(EmbeddingOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.input_dim() <= 0 || options.output_dim() <= 0) {
    throw ConfigError(describe() + ": input_dim and output_dim must be > 0, got " +
                      std::to_string(options.input_dim()) + " and " + std::to_string(options.output_dim()));
  }
  if (options.mask_zero()) {
    throw ConfigError(describe() + ": mask_zero true is not supported (torchfit has no masks; index 0 is a vector)");
  }
}

Shape EmbeddingImpl::build_impl(const Shape& in) {
  if (in.empty()) throw ConfigError(describe() + " needs an input with at least one axis, got " + format_shape(in));
  if (options.input_length() && *options.input_length() != in[0]) {
    throw ConfigError(describe() + ": input_length " + std::to_string(*options.input_length()) +
                      " is not the input's first axis " + format_shape(in));
  }
  embeddings = register_parameter(
      "embeddings", at::empty({options.input_dim(), options.output_dim()}, at::kFloat).uniform_(-0.05, 0.05));
  Shape out = in;
  out.push_back(options.output_dim());
  return out;
}

// Indices in Keras's order: an image's (N, C, H, W) moved to (N, H, W, C); a rank-3 output (an (H, W)
// input's) returned as an image (N, output_dim, H, W).
at::Tensor EmbeddingImpl::forward(const at::Tensor& x) {
  const at::Tensor keras = x.dim() == 4 ? x.movedim(1, -1) : x;
  const at::Tensor indices = keras.detach().to(at::kLong);  // truncation toward zero, as Keras's ops.cast
  if (indices.numel() > 0) {
    const int64_t lo = indices.min().item<int64_t>(), hi = indices.max().item<int64_t>();
    if (lo < 0 || hi >= options.input_dim()) {
      throw IndexError(describe() + ": index " + std::to_string(lo < 0 ? lo : hi) + " is outside [0, " +
                       std::to_string(options.input_dim()) + ") (input_dim " + std::to_string(options.input_dim()) +
                       ")");
    }
  }
  const at::Tensor y = at::embedding(embeddings, indices);
  return y.dim() == 4 ? y.movedim(-1, 1) : y;
}

nlohmann::json EmbeddingImpl::config() const { return base_config(options); }

void EmbeddingImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::expect_keras_weight_count(describe(), weights, 1);
  detail::assign_keras_weight(describe(), embeddings, weights[0], "embeddings");
}

std::vector<at::Tensor> EmbeddingImpl::keras_weights_impl() const { return {detail::keras_weight_copy(embeddings)}; }

std::string EmbeddingImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  std::string x = in[0];
  if (input_shape().size() == 3)
    x = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}, onnx_name(*this, "to_keras"));
  const std::string indices = g.add_node("Cast", {x}, {{"to", int64_t{7}}}, onnx_name(*this, "indices"));  // INT64
  std::string y = g.add_node("Gather", {g.add_initializer(onnx_name(*this, "embeddings"), embeddings), indices},
                             {{"axis", int64_t{0}}}, onnx_name(*this, "Gather"));
  if (input_shape().size() == 2)
    y = g.add_node("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}}, onnx_name(*this, "to_image"));
  return y;
}

TORCHFIT_REGISTER_LAYER(Embedding);

}  // namespace torchfit
