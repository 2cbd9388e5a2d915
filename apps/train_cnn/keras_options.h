#pragma once
// train_cnn's compile and fit settings from its flags: metrics, optimizer options, schedule, class weights,
// TensorBoard (run.json records them with every other flag: apps::parsed_arguments).
#include <cstdint>
#include <map>

#include <nlohmann/json.hpp>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/model/compile.h>
#include <torchfit/saving/checkpoint.h>

#include "args.h"

namespace train_cnn {

/// The optimizer of the run, decided before anything is trained or logged: --optimizer (default adam) with
/// the optimizer flags given replacing its settings (--lr, else its rate, else its Keras default; a
/// schedule's default decay_steps: the run's updates after the warm-up); with --resume (`resumed`), the
/// checkpoint's options with each flag given replacing its setting (torchfit::resumed_optimizer_options),
/// and --optimizer, when given, replacing its update rule (the checkpoint's rate, schedule and
/// BaseOptimizer settings kept unless the JSON or the flags give them; another optimizer starts with a
/// fresh state). Errors: UsageError (exit 2) naming the flag and --resume for a
/// change the library refuses; ConfigError naming --resume for a saved config that cannot be read.
torchfit::OptimizerOptions optimizer_options(const Args& a, const torchfit::saving::CheckpointInfo* resumed);

/// --loss (default categorical_crossentropy), `optimizer`, the --metrics list.
torchfit::CompileOptions compile_options(const Args& a, const torchfit::OptimizerOptions& optimizer);

/// The optimizer flags, before anything is read (torchfit::check_run_optimizer): --gradient-accumulation-steps
/// not above --epochs x --steps-per-epoch, each schedule flag one of --lr-schedule's (only cosine has a warm-up;
/// --lr is not piecewise's), a valid schedule (with --resume: checked on the merged schedule). Errors:
/// UsageError (exit 2) starting with the flag.
void check_optimizer_flags(const Args& a);

/// --class-weight (checked before training: call it once the data is found; errors: UsageError starting
/// with the flag): "balanced" over the training files' classes, or the JSON file's weights; empty when not given.
std::map<int64_t, double> class_weight(const Args& a, const std::vector<int64_t>& classes,
                                       const std::map<std::string, int64_t>& class_indices);

}  // namespace train_cnn
