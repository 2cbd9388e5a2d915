#pragma once
/// @file predict.h
/// predict — model outputs without a Trainer or an optimizer (keras Model.predict).
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/model/model.h>

namespace torchfit {

/// Outputs of `model` (probabilities (N, K) for a softmax model) for `steps` batches of `source`
/// (0 ⇒ one pass from the start: every sample, the partial last batch included), rows in the source's
/// order, on the CPU. Runs in eval mode without autograd on `device` (the model is moved there) and
/// puts the model's train/eval mode back. When `indices` is given it receives each row's sample index
/// (source.filenames()[i]). Errors: ConfigError for a model with several outputs (predict_outputs).
/// Outputs that are not finite are refused: a NaN or ±inf would otherwise
/// become a "probability" in the caller's files.
/// Errors: ConfigError for steps < 0; NumericError naming the first sample (its file when the source
/// has file names) whose output holds NaN or ±inf, e.g. "predict: the model's output for 'pred/001.png'
/// (sample 0) is not finite (nan); its weights may hold NaN or inf (diverged training or a damaged
/// checkpoint)"; what the source throws.
at::Tensor predict(ModelImpl& model, data::BatchIterator& source, c10::Device device = c10::Device(c10::kCPU),
                   int64_t steps = 0, std::vector<int64_t>* indices = nullptr);

/// Every output of a model with one or several inputs and outputs (Keras's predict returning a list):
/// one tensor per output, in output order, rows in the source's order; the inputs are each batch's
/// inputs() (Batch::x, more_x). Otherwise as predict above (which takes single-output models only).
std::vector<at::Tensor> predict_outputs(ModelImpl& model, data::BatchIterator& source,
                                        c10::Device device = c10::Device(c10::kCPU), int64_t steps = 0,
                                        std::vector<int64_t>* indices = nullptr);

/// Outputs of `model` for one batch `x` (N, C, H, W), on the CPU; as above (NumericError names the
/// sample's row in `x`).
at::Tensor predict(ModelImpl& model, const at::Tensor& x, c10::Device device = c10::Device(c10::kCPU));

/// Whether `model` scales its own pixel values, as Keras 3 models trained from image_dataset_from_directory
/// do: a Rescaling or Normalization layer comes before the first layer with weights, in layer order (the
/// augmentation layers, identity at inference, may precede it). Such a model takes the 0–255 pixels; one
/// without takes what its training source fed it, for a Keras file usually ImageDataGenerator's rescale
/// 1/255. predict_cnn decides a Keras file's default --rescale by it.
bool scales_own_input(const ModelImpl& model);

}  // namespace torchfit
