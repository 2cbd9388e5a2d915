#pragma once
// TensorFlow.js Layers models in (keras_file.h read_keras_file). Private to keras/.
#include <string>

#include <torchfit/keras/keras_file.h>

namespace torchfit::keras::detail {

/// Reads the TF.js model at `path` (a folder with model.json, or that file): the Keras config of its
/// modelTopology and every weight of its manifest, grouped by layer ("<layer>/<weight>", manifest order).
/// Errors: as read_keras_file.
KerasFile read_tfjs_model(const std::string& path, const KerasWeightsBudget& budget);

}  // namespace torchfit::keras::detail
