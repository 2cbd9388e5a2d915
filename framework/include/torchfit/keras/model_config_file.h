#pragma once
/// @file model_config_file.h
/// An architecture file (a Keras model.to_json(), Keras 1's JSON, Keras 3's config.json or torchfit's own
/// model JSON) read and built for the data a model trains on.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <torchfit/model/clone_model.h>

namespace torchfit::keras {

/// Where the architecture file `file` is: as given when it exists; otherwise, for a bare file name (no
/// folder part), where torchfit's shipped architectures lie: next to the running program (the build tree's
/// apps/), in <prefix>/share/torchfit/models beside its <prefix>/bin, then in each of `more_dirs` (e.g. the
/// models folder of the install prefix a program was built for). Errors: ConfigError for a folder, a path
/// the OS cannot look up (its reason), or a file found nowhere (listing the places tried).
std::string find_model_config(const std::string& file, const std::vector<std::string>& more_dirs = {});

/// The JSON of the architecture file `path`. Errors: ConfigError naming the file when it cannot be read,
/// is not valid JSON, or is a model file (HDF5 or zip: a Keras .h5/.keras or a torchfit checkpoint) rather
/// than an architecture.
nlohmann::json read_model_config(const std::string& path);

/// The model of the architecture file `path` (read_model_config, then model_from_json), adapted to the
/// data by adapt_to_data with `options.architecture_only(true)`: its input becomes options.input_shape()
/// (Keras (H, W, C); a Sequential whose first layer declares no input shape gets it too) and the units of
/// the Dense that gives the class scores become options.classes(). The model draws the initial weights
/// a model built directly at those shapes would (the random state is rewound before clone_model), and
/// leaves the random state as one build does. Each change is said in `changes`.
/// Errors: ConfigError naming the file, then what model_from_json or adapt_to_data says (an unknown layer
/// class or bad field naming the layer, several inputs or outputs, no Dense for the class scores, …).
Model model_config_for_data(const std::string& path, AdaptToDataOptions options,
                            std::vector<std::string>* changes = nullptr);

}  // namespace torchfit::keras
