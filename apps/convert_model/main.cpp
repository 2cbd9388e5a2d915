// convert_model — a Keras model file into a torchfit checkpoint, or any model into its architecture JSON.
//   convert_model mnist.keras mnist.ckpt                 (Keras file → checkpoint: config and weights)
//   convert_model weights.h5 model.ckpt --architecture arch.json   (Keras save_weights + to_json)
//   convert_model model.ckpt model.json                  (checkpoint or Keras file → architecture JSON)
//   convert_model model.ckpt model.onnx [--opset 17]     (checkpoint or Keras file → ONNX, docs/deployment.md)
//   convert_model model.ckpt model.keras                 (→ Keras 3 .keras; .weights.h5: its weights alone;
//                                                         .h5: tf.keras 2's HDF5 model, docs/keras_export.md)
//   convert_model model.ckpt web_model/                  (→ TensorFlow.js Layers model: web_model/model.json;
//                                                         and back: convert_model web_model model.keras)
// OUT ending in .json gets the architecture (torchfit's Sequential JSON, train_cnn --model-config reads it);
// anything else a checkpoint (predict_cnn --model reads it).
#include <CLI/CLI.hpp>

#include "../common/cli.h"

#include <iostream>
#include <vector>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/keras/keras_file.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/keras/keras_save.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/saving/onnx.h>
#include <torchfit/training/keras_optimizer_state.h>

using namespace torchfit;

namespace {

struct Args {
  std::string in, out, architecture;
  int opset = 17;
  bool opset_given = false;
  int64_t input_size = 0;  // 0: a dynamic height and width for a model whose input size is unknown
};

bool ends_with(const std::string& path, const std::string& suffix) {
  return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool ends_with_json(const std::string& path) { return ends_with(path, ".json"); }

// OUT: a file, or a folder for TensorFlow.js when it ends in '/'.
CLI::Validator tfjs_folder_or_file() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return !s.empty() && s.back() == '/' ? apps::output_directory()(s) : apps::output_file()(s);
      },
      "FILE|DIR/");
}

// Whether IN is a Keras file whose model config leaves an input's height and width unknown (null).
bool unknown_input_size(const Args& a) {
  if (!keras::is_keras_file(a.in)) return false;
  const std::string config = keras::read_keras_file(a.in, a.architecture).model_config.dump();
  return config.find("_shape\":[null,null,") != std::string::npos;
}

// IN's model; one whose input size is unknown (Keras (None, None, C)) is built at --input-size, or, without
// it, at the smallest of 32, 64, … 512 px its layers take (its ONNX export keeps the height and width dynamic).
Model load(const Args& a, saving::CheckpointInfo& info) {
  if (a.input_size > 0) {
    Model model = saving::load_checkpoint_or_keras(a.in, a.architecture, &info, InputSize{a.input_size, a.input_size});
    if (model->unknown_input_axes().empty() && model->input_shape().size() == 3 &&
        model->input_shape()[0] != a.input_size) {
      throw apps::UsageError("--input-size " + std::to_string(a.input_size) + ": '" + a.in + "' takes inputs " +
                             format_shape(model->input_shape()) + " only");
    }
    if (auto input = std::dynamic_pointer_cast<InputLayerImpl>(model->inputs()[0].layer())) {
      input->options.unknown_axes({});  // exported, and written, at that fixed size
    }
    return model;
  }
  if (!unknown_input_size(a)) return saving::load_checkpoint_or_keras(a.in, a.architecture, &info);
  std::string first_error;
  bool every_size_same = true;  // the same error at every size (a missing weights file): not the size's fault
  for (int64_t size = 32; size <= 512; size *= 2) {
    try {
      return saving::load_checkpoint_or_keras(a.in, a.architecture, &info, InputSize{size, size});
    } catch (const ConfigError& e) {
      if (first_error.empty()) first_error = e.what();
      every_size_same = every_size_same && first_error == e.what();
    }
  }
  if (every_size_same) throw ConfigError(first_error);
  throw ConfigError(first_error +
                    " (built at 32 to 512 px; a model whose input size is unknown (None) and whose weights depend "
                    "on it, a Dense after a Flatten, needs --input-size)");
}

// A checkpoint's optimizer variables, for Keras files; none (a warning says why) where they cannot be written.
std::optional<keras::KerasOptimizerState> optimizer_variables(const Args& a, Model& model) {
  try {
    return checkpoint_optimizer_state(a.in, model);
  } catch (const ConfigError& e) {
    std::cerr << "warning: " << a.out << ": written without the optimizer's variables: " << e.what() << "\n";
    return std::nullopt;
  }
}

int run(const Args& a) {
  apps::check_output_is_not_input({"OUT", a.out}, {{"IN", a.in}, {"--architecture", a.architecture}}, {});
  if (a.opset_given && !ends_with(a.out, ".onnx")) {
    throw apps::UsageError("--opset applies to an ONNX output (OUT ending in .onnx), got OUT '" + a.out + "'");
  }
  saving::CheckpointInfo info;
  Model model = load(a, info);
  if (ends_with_json(a.out)) {
    io::write_text_atomically(a.out, model->to_json().dump(2) + "\n");
    std::cout << "Architecture of " << a.in << " (" << model->layers().size() << " layers) → " << a.out << "\n";
    return 0;
  }
  if (ends_with(a.out, ".onnx")) {
    saving::OnnxExportOptions options;
    options.opset = a.opset;
    options.class_names = keras::torchfit_metadata(info.class_indices, {}).class_names;
    options.preprocessing = info.preprocessing;
    saving::export_onnx(model, a.out, options);
    std::cout << "Exported " << a.in << " (" << model->count_params() << " parameters, opset " << a.opset << ") → "
              << a.out << "\n";
    return 0;
  }
  if (!keras::keras_output_kind(a.out).empty()) {
    keras::KerasSaveOptions options;  // a checkpoint's compile settings become Keras's compile_config
    if (info.compile.is_object() && info.compile.contains("optimizer")) {
      options.compile = info.compile;
      const auto features = info.optimizer_features;  // the optimizer's whole Keras config, when saved
      if (features.is_object() && features.contains("config")) options.compile["optimizer"] = features["config"];
      if (!keras::is_keras_file(a.in)) options.optimizer = optimizer_variables(a, model);
    }
    options.torchfit = keras::torchfit_metadata(info.class_indices, info.preprocessing);  // for predict_cnn
    const std::string kind = keras::save_keras_file(*model, a.out, options);
    std::cout << "Wrote " << a.in << " (" << model->count_params() << " parameters) → " << a.out << " (" << kind
              << ")\n";
    return 0;
  }
  saving::TrainingState state;
  state.model = model;
  state.class_indices = info.class_indices;
  state.preprocessing = info.preprocessing;  // predictions from the copy feed pixels as training did
  saving::save_checkpoint(a.out, state);
  std::cout << "Converted " << a.in << " (" << model->count_params() << " parameters) → " << a.out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{
      "Convert a Keras model file (.h5, .keras) to a torchfit checkpoint, or write a model's "
      "architecture JSON, an ONNX file or a Keras file (.keras, .weights.h5, .h5).",
      "convert_model"};
  app.add_option("IN", a.in,
                 "Keras file (.h5 model.save or save_weights, .keras, .weights.h5), TensorFlow.js folder or its "
                 "model.json, or torchfit checkpoint")
      ->required()
      ->check(apps::model_file_or_tfjs_folder());
  app.add_option("OUT", a.out,
                 "Checkpoint to write; architecture JSON when it ends in .json, ONNX when it ends in .onnx, a Keras 3 "
                 "model when it ends in .keras, Keras 3 weights (model.save_weights) when it ends in .weights.h5, a "
                 "tf.keras 2 HDF5 model when it ends in .h5, a TensorFlow.js Layers model (model.json + weight shards) "
                 "in the folder OUT when it ends in /")
      ->required()
      ->check(tfjs_folder_or_file());
  app.add_option("--architecture", a.architecture, "Keras model JSON (model.to_json()) for a weights-only .h5")
      ->check(apps::existing_file("architecture JSON"));
  auto* opset = app.add_option("--opset", a.opset, "ONNX opset of an .onnx OUT (13-17)")
                    ->capture_default_str()
                    ->check(CLI::Range(13, 17));
  app.add_option("--input-size", a.input_size,
                 "Height and width to build a model whose input size is unknown (Keras (None, None, 3)) at: its "
                 "ONNX file and checkpoint then take that size only. Default: the ONNX input keeps a dynamic "
                 "height and width (dim_param), the model built at 32 px or the smallest power of two it takes")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  TORCHFIT_CLI_PARSE(app, argc, argv);
  a.opset_given = opset->count() > 0;
  return apps::run_reporting_errors("convert_model", [&] { return run(a); });
}
