#pragma once
/// @file predict.h
/// predict — model outputs without a Trainer or an optimizer (keras Model.predict).
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/model/sequential.h>

namespace torchfit {

/// Outputs of `model` (probabilities (N, K) for a softmax model) for `steps` batches of `source`
/// (0 ⇒ one pass from the start: every sample, the partial last batch included), rows in the source's
/// order, on the CPU. Runs in eval mode without autograd on `device` (the model is moved there) and
/// puts the model's train/eval mode back. When `indices` is given it receives each row's sample index
/// (source.filenames()[i]). Errors: ConfigError for steps < 0; what the source throws.
at::Tensor predict(SequentialImpl& model, data::BatchIterator& source, c10::Device device = c10::Device(c10::kCPU),
                   int64_t steps = 0, std::vector<int64_t>* indices = nullptr);

/// Outputs of `model` for one batch `x` (N, C, H, W), on the CPU; as above.
at::Tensor predict(SequentialImpl& model, const at::Tensor& x, c10::Device device = c10::Device(c10::kCPU));

}  // namespace torchfit
