#pragma once
// train_cnn's compile and fit settings from its flags: metrics, optimizer options, schedule, class weights,
// TensorBoard — and what run.json records of them.
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

/// The flags above as run.json's "arguments" record them.
nlohmann::json keras_option_arguments(const Args& a);

}  // namespace train_cnn
