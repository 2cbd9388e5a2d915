#pragma once
// What the per-sample normalization layers share (LayerNormalization, UnitNormalization,
// RMSNormalization): a Keras `axis` resolved against the input, the weights' Keras shape and their view
// against torchfit's tensor, and the ONNX mean over several axes.
#include <string>
#include <vector>

#include <torchfit/io/onnx_graph.h>
#include <torchfit/layers/keras_axes.h>
#include <torchfit/layers/layer.h>

namespace torchfit::detail {

/// ConfigError "<who>: epsilon must be > 0, got E" unless epsilon > 0.
void check_epsilon(const std::string& who, double epsilon);

/// Keras's [gamma (when defined), beta (when defined)] copied into them (count and shapes checked).
void set_gamma_and_beta(const std::string& who, at::Tensor& gamma, at::Tensor& beta,
                        const std::vector<at::Tensor>& weights);
/// [gamma, beta], each when defined, as Keras gives them back.
std::vector<at::Tensor> gamma_and_beta_to_keras(const at::Tensor& gamma, const at::Tensor& beta);

/// A Keras `axis` argument resolved against the per-sample Keras shape `in`.
struct NormalizedAxes {
  std::vector<int64_t> keras;        ///< Keras axes (batch = 0), sorted
  std::vector<int64_t> tensor;       ///< the same axes of the (N, C, H, W) / (N, ...) tensor, in the order given
  std::vector<int64_t> param_shape;  ///< a weight over them: their sizes in Keras order
  std::vector<int64_t> param_view;   ///< that weight as a Keras-rank tensor (1 elsewhere), batch included
};

/// Errors: ConfigError "<who>: axis A is the batch axis, repeated or outside the input (…)".
NormalizedAxes normalized_axes(const std::string& who, const KerasAxes& axis, const Shape& in);

/// A weight of `param_shape` as a tensor broadcasting against torchfit's layout (an image's channels
/// first); `contiguous` for an ONNX initializer.
at::Tensor weight_against_tensor(const at::Tensor& weight, const std::vector<int64_t>& param_view,
                                 bool contiguous = false);

/// The mean over `axes` (keepdims) as one ReduceMean per axis, last axis first — the same mean (equal-sized
/// groups); OpenCV 4.10 computes a ReduceMean over several axes of a batch wrongly (checked: LN over (H, W, C)).
std::string onnx_mean_over(const Layer& l, io::OnnxGraph& g, std::string x, const std::vector<int64_t>& axes,
                           const std::string& what);

}  // namespace torchfit::detail
