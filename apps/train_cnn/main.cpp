// train_cnn — the article's experiment: the seed CNN on an image folder (train/, test/) with the Keras
// progress line and per-step timing logs, on CPU or CUDA.
//   train_cnn --device cuda --epochs 5 --data ./data
#include <CLI/CLI.hpp>

#include "../common/cli.h"
#include "args.h"
#include "train.h"

int main(int argc, char** argv) {
  train_cnn::Args a;
  CLI::App app{"Train the article's CNN (Keras-style) on an image folder with per-step timings.", "train_cnn"};
  train_cnn::add_flags(app, a);
  TORCHFIT_CLI_PARSE(app, argc, argv);
  a.arguments = torchfit::apps::parsed_arguments(app);
  for (const CLI::Option* option : app.get_options())
    if (option->count() > 0 && !option->get_lnames().empty()) a.given.insert("--" + option->get_lnames().front());
  return torchfit::apps::run_reporting_errors("train_cnn", [&] { return train_cnn::run(a); });
}
