#pragma once
// train_cnn --model-config: find and load a model architecture JSON (Keras or torchfit model JSON).
#include <string>

#include <torchfit/model/sequential.h>

namespace train_cnn {

/// Where `file` is: as given when it exists; otherwise, for a bare file name (no directory part), next
/// to the train_cnn executable (the build tree copies seed_cnn.json there) and then in the installed
/// models folder (<prefix>/share/torchfit/models). Errors: torchfit::ConfigError listing the places tried.
std::string resolve_model_config(const std::string& file);

/// The architecture file `path` built for the data: input (size, size, channels) (Keras order; the images
/// train_cnn feeds), `classes` units in the Dense that gives the class scores (keras::model_config_for_data);
/// each change is logged. Errors: ConfigError naming the file (keras::model_config_for_data).
torchfit::Model load_model_config(const std::string& path, int64_t size, int64_t channels, int64_t classes);

}  // namespace train_cnn
