#pragma once
// train_cnn's compile and fit settings from its flags: metrics, optimizer options, schedule, class weights,
// TensorBoard (run.json records them with every other flag: apps::parsed_arguments).
#include <cstdint>
#include <map>

#include <nlohmann/json.hpp>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/model/compile.h>

#include "args.h"

namespace train_cnn {

/// categorical_crossentropy, Adam at --lr with the optimizer flags, the --metrics list. `updates`: the
/// weight updates of the run (the default decay_steps). Errors: torchfit::ConfigError naming the flag.
torchfit::CompileOptions compile_options(const Args& a, int64_t updates);

/// The schedule flags, before anything is read: each flag belongs to the --lr-schedule given (only cosine
/// has a warm-up), --lr-boundaries whole numbers >= 1 strictly increasing, --lr-values finite, one more
/// value than boundaries. Errors: UsageError (exit 2) starting with the flag.
void check_schedule_flags(const Args& a);

/// --resume: the optimizer options the checkpoint saved (its run.json's compile.optimizer_config: clipping,
/// weight decay, EMA, accumulation, the schedule with its decay_steps) fill the flags not given, so that a
/// resume without repeating them continues the run exactly; a flag that changes a saved value is logged.
/// `state`: the checkpoint's optimizer_features ({"config", "accumulated", ...}; null = none saved).
/// Errors: UsageError naming --gradient-accumulation-steps when it changes in the middle of an accumulation.
void restore_optimizer_flags(Args& a, const nlohmann::json& state);

/// --metrics: each name known (MetricSet's names), none twice, no empty item. Errors: UsageError naming --metrics.
void check_metrics_flag(const Args& a);

/// --class-weight (checked before training: call it once the data is found; errors: UsageError starting
/// with the flag): "balanced" over the training files' classes, or the JSON file's weights; empty when not given.
std::map<int64_t, double> class_weight(const Args& a, const torchfit::data::DirectoryIterator& train);

}  // namespace train_cnn
