#pragma once
// train_cnn --model-config: find and load a model architecture JSON (Keras or torchfit model JSON).
#include <string>

#include <torchfit/model/sequential.h>

namespace train_cnn {

/// Where `file` is: as given when it exists; otherwise, for a bare file name (no directory part), next
/// to the train_cnn executable (the build tree copies seed_cnn.json there) and then in the installed
/// models folder (<prefix>/share/torchfit/models). Errors: torchfit::ConfigError listing the places tried.
std::string resolve_model_config(const std::string& file);

/// Reads the JSON at `path` (any format model_from_json reads: torchfit's, tf.keras 2.x, Keras 1, Keras 3)
/// and builds the model for the data: its input becomes (size, size, channels) (Keras order; the images
/// train_cnn feeds) and the units of the Dense that gives the class scores (the output layer, or the
/// Dense an output Activation/Softmax/Dropout reads) become `classes`; each change is logged. The model
/// draws the initial weights one built directly would. Errors: ConfigError naming the file for
/// unreadable/invalid JSON, an unknown layer class or bad field (naming the layer and field), a model
/// with several inputs or outputs, an output that is no Dense, or a model whose output is not (classes).
torchfit::Model load_model_config(const std::string& path, int64_t size, int64_t channels, int64_t classes);

}  // namespace train_cnn
