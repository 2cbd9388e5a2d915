// convert_model — a Keras model file into a torchfit checkpoint, or any model into its architecture JSON.
//   convert_model mnist.keras mnist.ckpt                 (Keras file → checkpoint: config and weights)
//   convert_model weights.h5 model.ckpt --architecture arch.json   (Keras save_weights + to_json)
//   convert_model model.ckpt model.json                  (checkpoint or Keras file → architecture JSON)
//   convert_model model.ckpt model.onnx [--opset 17]     (checkpoint or Keras file → ONNX, docs/deployment.md)
// OUT ending in .json gets the architecture (torchfit's Sequential JSON, train_cnn --model-config reads it);
// anything else a checkpoint (predict_cnn --model reads it).
#include <CLI/CLI.hpp>

#include "../common/cli.h"

#include <iostream>
#include <map>
#include <vector>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/saving/onnx.h>

using namespace torchfit;

namespace {

struct Args {
  std::string in, out, architecture;
  int opset = 17;
  bool opset_given = false;
};

bool ends_with(const std::string& path, const std::string& suffix) {
  return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool ends_with_json(const std::string& path) { return ends_with(path, ".json"); }

// Class names in index order from the checkpoint's class_indices (empty when it has none).
std::vector<std::string> class_names(const std::map<std::string, int64_t>& class_indices) {
  std::vector<std::string> names(class_indices.size());
  for (const auto& [name, index] : class_indices) {
    if (index < 0 || index >= static_cast<int64_t>(names.size())) return {};
    names[static_cast<size_t>(index)] = name;
  }
  return names;
}

int run(const Args& a) {
  apps::check_output_is_not_input({"OUT", a.out}, {{"IN", a.in}, {"--architecture", a.architecture}}, {});
  if (a.opset_given && !ends_with(a.out, ".onnx")) {
    throw apps::UsageError("--opset applies to an ONNX output (OUT ending in .onnx), got OUT '" + a.out + "'");
  }
  saving::CheckpointInfo info;
  Model model = saving::load_checkpoint_or_keras(a.in, a.architecture, &info);
  if (ends_with_json(a.out)) {
    io::write_text_atomically(a.out, model->to_json().dump(2) + "\n");
    std::cout << "Architecture of " << a.in << " (" << model->layers().size() << " layers) → " << a.out << "\n";
    return 0;
  }
  if (ends_with(a.out, ".onnx")) {
    saving::OnnxExportOptions options;
    options.opset = a.opset;
    options.class_names = class_names(info.class_indices);
    saving::export_onnx(model, a.out, options);
    std::cout << "Exported " << a.in << " (" << model->count_params() << " parameters, opset " << a.opset << ") → "
              << a.out << "\n";
    return 0;
  }
  saving::TrainingState state;
  state.model = model;
  state.class_indices = info.class_indices;
  saving::save_checkpoint(a.out, state);
  std::cout << "Converted " << a.in << " (" << model->count_params() << " parameters) → " << a.out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{
      "Convert a Keras model file (.h5, .keras) to a torchfit checkpoint, or write a model's "
      "architecture JSON or an ONNX file.",
      "convert_model"};
  app.add_option("IN", a.in, "Keras file (.h5 model.save or save_weights, .keras) or torchfit checkpoint")
      ->required()
      ->check(apps::existing_file("model"));
  app.add_option("OUT", a.out,
                 "Checkpoint to write; architecture JSON when it ends in .json, ONNX when it ends in .onnx")
      ->required()
      ->check(apps::output_file());
  app.add_option("--architecture", a.architecture, "Keras model JSON (model.to_json()) for a weights-only .h5")
      ->check(apps::existing_file("architecture JSON"));
  auto* opset = app.add_option("--opset", a.opset, "ONNX opset of an .onnx OUT (13-17)")
                    ->capture_default_str()
                    ->check(CLI::Range(13, 17));
  TORCHFIT_CLI_PARSE(app, argc, argv);
  a.opset_given = opset->count() > 0;
  return apps::run_reporting_errors("convert_model", [&] { return run(a); });
}
