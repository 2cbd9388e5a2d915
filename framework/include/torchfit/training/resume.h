#pragma once
/// @file resume.h
/// Continuing a saved run exactly (FitOptions::resume_from): what fit() does before its first step. A
/// free function rather than a Trainer method, so that this file and trainer.cpp do not depend on each
/// other.
#include <cstdint>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/saving/checkpoint.h>

namespace torchfit {

class Trainer;
struct FitOptions;

/// The stream settings of `train` as a checkpoint records them (TrainingPosition::data):
/// BatchIterator::stream_config() plus "world_size" for a data-parallel run of more than one process.
data::StreamConfig stream_config_of(const data::BatchIterator& train, int world_size);

/// The optimizer options the checkpoint's run was compiled with (OptimizerOptions::from_config of its
/// optimizer_features config, else of its compile.optimizer settings): a resumed run's options are these,
/// overridden by what the caller changes (train_cnn: the flags given). Errors: ConfigError from
/// from_config naming the field.
OptimizerOptions saved_optimizer_options(const saving::CheckpointInfo& info);

/// Continues the run saved in `checkpoint` with `trainer`. First, before anything changes, it checks that
/// the run can continue exactly, and that resume_learning_rate is not given for an optimizer with a
/// learning-rate schedule. Then it loads the weights, the optimizer's state and learning rate, the
/// random-number state and the position (Trainer::load_checkpoint, which logs once the optimizer
/// settings that differ from the saved ones, and continues from the trained weights of a checkpoint
/// whose weights are EMA averages), applies options.resume_learning_rate() (logged "learning rate A →
/// B"), takes the checkpoint's class weights when options.class_weight() is empty (other weights replace
/// them, logged "class_weight A → B"), skips the batches the saved run took from `train` and
/// options.validation_data(), sets options' initial_epoch and initial_step, and logs "resumed from …".
/// `stream` is stream_config_of(train, world size), `steps` the steps per epoch.
/// Errors: ConfigError naming the checkpoint when it was trained on other classes, with another batch
/// size or number of processes, on a stream whose settings differ (each one listed), or stopped at a step
/// beyond `steps`; ConfigError for resume_learning_rate with a schedule; what Trainer::load_checkpoint
/// throws.
void resume_fit(Trainer& trainer, const saving::Checkpoint& checkpoint, data::BatchIterator& train,
                const data::StreamConfig& stream, FitOptions& options, int64_t steps);

}  // namespace torchfit
