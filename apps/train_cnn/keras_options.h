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

/// --class-weight: "balanced" over the training files' classes, or the JSON file's weights; empty when not given.
std::map<int64_t, double> class_weight(const Args& a, const torchfit::data::DirectoryIterator& train);

}  // namespace train_cnn
