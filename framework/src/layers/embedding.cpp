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

at::Tensor EmbeddingImpl::compute_mask(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>&) const {
  if (!options.mask_zero()) return {};
  const at::Tensor& x = inputs.at(0);
  return (x.dim() == 4 ? x.movedim(1, -1) : x).detach().ne(0);  // on the raw values, as Keras
}

nlohmann::json EmbeddingImpl::config() const { return base_config(options); }

void EmbeddingImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::expect_keras_weight_count(describe(), weights, 1);
  detail::assign_keras_weight(describe(), embeddings, weights[0], "embeddings");
}

std::vector<at::Tensor> EmbeddingImpl::keras_weights_impl() const { return {detail::keras_weight_copy(embeddings)}; }

// The lookup as a one-hot product, not a Gather: OpenCV 4.10 runs Cast + Gather with other values than
// torchfit's and no error, 4.6 refuses it. Index i = floor(relu(x)) (Keras's truncation toward zero for every
// valid index); one_hot = relu(1 - |i - range(input_dim)|), exact for integers; y = one_hot · embeddings. An
// index outside [0, input_dim) gives a zero vector here (torchfit's forward throws IndexError).
std::string EmbeddingImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  std::string x = in[0];
  if (input_shape().size() == 3)
    x = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}, onnx_name(*this, "to_keras"));
  std::vector<int64_t> column{0};
  column.insert(column.end(), input_shape().begin(), input_shape().end());
  column.push_back(1);
  x = g.add_node("Relu", {x}, {}, onnx_name(*this, "nonnegative"));
  x = g.add_node("Floor", {x}, {}, onnx_name(*this, "indices"));
  x = g.add_node("Reshape", {x, g.add_int64s(onnx_name(*this, "column_shape"), column)}, {},
                 onnx_name(*this, "column"));
  const at::Tensor range = at::arange(options.input_dim(), at::kFloat);
  x = g.add_node("Sub", {x, g.add_initializer(onnx_name(*this, "range"), range)}, {}, onnx_name(*this, "distance"));
  x = g.add_node("Abs", {x}, {}, onnx_name(*this, "abs_distance"));
  x = g.add_node("Sub", {g.add_scalar(onnx_name(*this, "one"), 1.0F), x}, {}, onnx_name(*this, "closeness"));
  x = g.add_node("Relu", {x}, {}, onnx_name(*this, "one_hot"));
  std::string y = g.add_node("MatMul", {x, g.add_initializer(onnx_name(*this, "embeddings"), embeddings)}, {},
                             onnx_name(*this, "lookup"));
  if (input_shape().size() == 2)
    y = g.add_node("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}}, onnx_name(*this, "to_image"));
  return y;
}

TORCHFIT_REGISTER_LAYER(Embedding);

}  // namespace torchfit
