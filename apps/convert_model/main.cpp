// convert_model — a Keras model file into a torchfit checkpoint, or any model into its architecture JSON.
//   convert_model mnist.keras mnist.ckpt                 (Keras file → checkpoint: config and weights)
//   convert_model weights.h5 model.ckpt --architecture arch.json   (Keras save_weights + to_json)
//   convert_model model.ckpt model.json                  (checkpoint or Keras file → architecture JSON)
// OUT ending in .json gets the architecture (torchfit's Sequential JSON, train_cnn --model-config reads it);
// anything else a checkpoint (predict_cnn --model reads it).
#include <CLI/CLI.hpp>

#include "../common/cli.h"

#include <iostream>

#include <torchfit/io/atomic_file.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/saving/keras_import.h>

using namespace torchfit;

namespace {

struct Args {
  std::string in, out, architecture;
};

bool ends_with_json(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

int run(const Args& a) {
  apps::check_output_is_not_input({"OUT", a.out}, {{"IN", a.in}, {"--architecture", a.architecture}}, {});
  saving::CheckpointInfo info;
  Model model = saving::load_checkpoint_or_keras(a.in, a.architecture, &info);
  if (ends_with_json(a.out)) {
    io::write_text_atomically(a.out, model->to_json().dump(2) + "\n");
    std::cout << "Architecture of " << a.in << " (" << model->layers().size() << " layers) → " << a.out << "\n";
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
      "architecture JSON.",
      "convert_model"};
  app.add_option("IN", a.in, "Keras file (.h5 model.save or save_weights, .keras) or torchfit checkpoint")
      ->required()
      ->check(apps::existing_file("model"));
  app.add_option("OUT", a.out, "Checkpoint to write, or architecture JSON when it ends in .json")
      ->required()
      ->check(apps::output_file());
  app.add_option("--architecture", a.architecture, "Keras model JSON (model.to_json()) for a weights-only .h5")
      ->check(apps::existing_file("architecture JSON"));
  TORCHFIT_CLI_PARSE(app, argc, argv);
  return apps::run_reporting_errors("convert_model", [&] { return run(a); });
}
