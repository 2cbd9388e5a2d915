#pragma once
/// @file keras_optimizer_state.h
/// An optimizer's variables as Keras saves them (keras/keras_save.h KerasOptimizerState): what
/// `train_cnn --save-keras` and `convert_model` write beside a compiled model's weights.
#include <cstdint>
#include <map>
#include <string>

#include <torch/optim/optimizer.h>

#include <torchfit/keras/keras_save.h>
#include <torchfit/model/compile.h>
#include <torchfit/model/model.h>

namespace torchfit {

/// The Keras variables of `optimizer`, made by make_optimizer from `options`, after `iterations` weight
/// updates (OptimizerFeatures::iterations, or a checkpoint's position):
/// - "adam" / "adamw" (torch::optim::Adam, FusedAdam, the Keras-rule Adam): Keras's momentum and velocity
///   are LibTorch's exp_avg and exp_avg_sq (the same recurrences), velocity_hat its max_exp_avg_sq (amsgrad);
/// - "sgd" with momentum: Keras keeps m = momentum·m − lr·g where LibTorch keeps b = momentum·b + g, so
///   m = −lr·b (exact under a constant rate; under a schedule it uses the rate now);
/// - "rmsprop": velocity, momentum, average_gradient (the Keras-rule RMSprop's square_avg, momentum_buffer,
///   grad_avg).
/// The current learning rate is written unless the options have a schedule (Keras keeps none then). A
/// parameter that has not been updated yet gets zero slots, as Keras's build makes them. tf.keras 2 names:
/// m, v, vhat; momentum; rms, momentum, mg. Errors: ConfigError naming the optimizer for another one
/// ("their variables are not written"), or for use_ema / gradient_accumulation_steps (their averages and
/// accumulators are not written yet).
keras::KerasOptimizerState keras_optimizer_state(const torch::optim::Optimizer& optimizer,
                                                 const OptimizerOptions& options, int64_t iterations);

class Trainer;

/// The optimizer variables a torchfit checkpoint at `path` holds, for `model` (loaded from that checkpoint:
/// saving::load_model): the saved optimizer (saved_optimizer_options) rebuilt over the model's parameters, its
/// state loaded, after the checkpoint's recorded iterations. What `convert_model CKPT OUT.keras` writes.
/// Errors: IoError/ConfigError naming the file as saving::load_checkpoint; ConfigError as
/// keras_optimizer_state.
keras::KerasOptimizerState checkpoint_optimizer_state(const std::string& path, Model& model);

/// Keras's `model.save(path)` for a trained model: `trainer`'s model written by keras::save_keras_file (.keras,
/// .weights.h5, .h5, or a TF.js folder ending in '/') with its compile settings (Keras's compile_config /
/// training_config) and, in .keras and .h5 files, the optimizer's variables (keras_optimizer_state, after
/// OptimizerFeatures::iterations updates) — when they cannot be written, a warning names the reason and the
/// file holds the model without them, as a Keras file saved uncompiled would. The class names
/// (`class_indices`, the training folders') and the training source's preprocessing (Trainer::
/// preprocessing) go into the file as keras::TorchfitMetadata, for predict_cnn. Returns the format's name.
/// Errors: as keras::save_keras_file.
std::string save_keras_file(Trainer& trainer, const std::string& path,
                            const std::map<std::string, int64_t>& class_indices = {});

}  // namespace torchfit
