// fit_arrays — Keras's model.fit(x, y, validation_split=…, sample_weight=…) on arrays in files (.npy,
// .npz members, CSV), for a model given as Keras JSON; prints Keras's progress line and the final metrics.
//   fit_arrays --model-config dense_regression.json --x x.npy --y y.npy --validation-split 0.2 \
//              --loss mse --metrics mae --epochs 100
// With --sequence-length, --x is a time series and the model forecasts its next step from windows of
// timeseries_dataset_from_array (data/timeseries.h), next to the naive last-value forecast:
//   fit_arrays --model-config lstm.json --x sunspots.csv --column 1 --sequence-length 12 --epochs 60
// A model with several inputs and outputs takes one --x per input and one --y per output, in the model's
// order, and per-output losses, weights and metrics as JSON (Keras's compile(loss=[…], loss_weights=…)):
//   fit_arrays --model-config two_heads.json --x img.npy --x meta.npy --y cls.npy --y flag.npy \
//              --loss '["sparse_categorical_crossentropy", "binary_crossentropy"]' --loss-weights '[1, 0.5]'
#include <filesystem>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include <torchfit/data/arrays.h>
#include <torchfit/data/timeseries.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/keras/model_config_file.h>
#include <torchfit/runtime/device.h>
#include <torchfit/runtime/env_info.h>
#include <torchfit/runtime/logging.h>
#include <torchfit/runtime/process.h>
#include <torchfit/training/class_weight.h>
#include <torchfit/training/keras_optimizer_state.h>
#include <torchfit/training/metrics.h>
#include <torchfit/training/optimizers.h>
#include <torchfit/training/trainer.h>

#include "../common/cli.h"

namespace {

namespace apps = torchfit::apps;
using torchfit::data::Arrays;

struct Args {
  std::string model_config, sample_weight, validation_sample_weight;
  std::vector<std::string> x, y, validation_x, validation_y;  // one per model input / output
  std::string loss = "mse", metrics = "mae", optimizer = "adam", class_weight, device = "cpu";
  std::string loss_weights, output_metrics, weighted_metrics, save;
  bool metrics_given = false;  // --metrics on the command line (its default "mae" is for one output)
  std::string delimiter = ",";
  double validation_split = 0.0, lr = 0.0;
  int epochs = 1, verbose = 1, threads = 0;
  int64_t batch_size = 32;
  bool no_shuffle = false;
  uint64_t seed = 0;
  // Time-series mode (--sequence-length > 0).
  int64_t sequence_length = 0, sequence_stride = 1, sampling_rate = 1, column = -1, target_column = 0;
  bool no_standardize = false;
};

void add_timeseries_flags(CLI::App& app, Args& a) {
  app.add_option("--sequence-length", a.sequence_length,
                 "Time-series mode: --x is a series (T) or (T, F); the model forecasts the step after each "
                 "window of this many steps (Keras timeseries_dataset_from_array); --y is not given")
      ->check(apps::int_range(1));
  app.add_option("--sequence-stride", a.sequence_stride, "Steps between window starts (Keras sequence_stride)")
      ->capture_default_str()
      ->check(apps::int_range(1))
      ->needs(app.get_option("--sequence-length"));
  app.add_option("--sampling-rate", a.sampling_rate, "Steps between a window's samples (Keras sampling_rate)")
      ->capture_default_str()
      ->check(apps::int_range(1))
      ->needs(app.get_option("--sequence-length"));
  app.add_option("--column", a.column, "Use only this column of the series file (0-based), e.g. 1 after a year")
      ->check(apps::int_range(0))
      ->needs(app.get_option("--sequence-length"));
  app.add_option("--target-column", a.target_column, "The forecast column of a multi-column series")
      ->capture_default_str()
      ->check(apps::int_range(0))
      ->needs(app.get_option("--sequence-length"));
  app.add_flag("--no-standardize", a.no_standardize,
               "Keep the series' units (default: standardized by the training steps' mean and std)")
      ->needs(app.get_option("--sequence-length"));
}

void add_flags(CLI::App& app, Args& a) {
  app.add_option("--model-config", a.model_config,
                 "Keras model JSON (a bare name: the shipped ones, e.g. dense_regression.json)")
      ->required()
      ->transform(CLI::Validator(
          [](std::string& s) -> std::string {
            try {
              s = torchfit::keras::find_model_config(s);  // the option then holds the path found
              return "";
            } catch (const std::exception& e) {
              return e.what();
            }
          },
          "JSON"));
  const std::string arrays = "FILE.npy | FILE.npz:NAME | FILE.csv";
  app.add_option("--x", a.x, "Inputs (N, ...): " + arrays + "; once per input of a model with several, in its order")
      ->required()
      ->take_all();
  app.add_option("--y", a.y,
                 "Targets (N, ...): " + arrays +
                     "; once per output, in the model's order (required unless "
                     "--sequence-length)")
      ->take_all();
  app.add_option("--sample-weight", a.sample_weight,
                 "Loss weights, per sample (N) or per pixel (N, H, W) for segmentation targets: " + arrays);
  app.add_option("--validation-split", a.validation_split,
                 "Fraction in (0, 1) of the samples, the LAST ones (Keras), to validate on")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--validation-x", a.validation_x,
                 "Validation inputs (Keras validation_data; overrides --validation-split)");
  app.add_option("--validation-y", a.validation_y, "Validation targets")->needs(app.get_option("--validation-x"));
  app.get_option("--validation-x")->needs(app.get_option("--validation-y"));
  app.add_option("--validation-sample-weight", a.validation_sample_weight, "Validation sample weights")
      ->needs(app.get_option("--validation-x"));
  app.add_option("--loss", a.loss,
                 "Keras loss name or object (JSON), for every output; or a JSON list (one per output, in order) or "
                 "object {output name: loss} for a model with several outputs")
      ->capture_default_str();
  app.add_option("--loss-weights", a.loss_weights,
                 "Keras loss_weights as JSON: a number, a list in output order or {output name: weight}");
  app.add_option("--metrics", a.metrics, "Comma-separated Keras metrics (several outputs: one per output, in order)")
      ->capture_default_str();
  app.add_option("--output-metrics", a.output_metrics,
                 "Several outputs: the metrics per output as JSON, a list in output order (entries a metric or a "
                 "list) or {output name: metric(s)}; replaces --metrics");
  app.add_option("--weighted-metrics", a.weighted_metrics,
                 "Keras weighted_metrics, weighed by --sample-weight (or --class-weight): comma-separated names, or "
                 "JSON as --output-metrics for several outputs; logged as weighted_<name> when --metrics has <name>");
  app.add_option("--optimizer", a.optimizer, "Keras optimizer name or object (JSON)")->capture_default_str();
  app.add_option("--lr", a.lr, "Learning rate (default: the optimizer's Keras default)")
      ->check(apps::positive_finite());
  app.add_option("--class-weight", a.class_weight, "JSON file {\"0\": w0, \"1\": w1, ...} (Keras class_weight)");
  app.add_option("--save", a.save,
                 "Write the trained model: FILE.keras (Keras 3's format, as model.save) or a torchfit checkpoint "
                 "(any other name; predict_cnn reads both); checked before training, missing folders created")
      ->check(apps::output_file("model.ckpt"));
  app.add_option("--epochs", a.epochs, "Epochs")->capture_default_str()->check(apps::int_range(1));
  apps::add_batch_size_flag(app, a.batch_size, "Samples per batch");
  app.add_flag("--no-shuffle", a.no_shuffle, "Keep the training samples in file order (Keras shuffle=False)");
  app.add_option("--seed", a.seed, "Seed of the initial weights and the shuffling")
      ->capture_default_str()
      ->check(apps::seed_value());
  app.add_option("--delimiter", a.delimiter, "CSV field separator (' ' for whitespace-separated text)")
      ->capture_default_str()
      ->check(CLI::IsMember({",", ";", " ", "\t"}));
  app.add_option("--verbose", a.verbose, "0 silent, 1 progress bar, 2 one line per epoch")
      ->capture_default_str()
      ->check(CLI::Range(0, 2));
  apps::add_device_flag(app, a.device);
  apps::add_threads_flag(app, a.threads);
  add_timeseries_flags(app, a);
}

at::Tensor load(const std::string& spec, const Args& a) {
  return spec.empty() ? at::Tensor() : torchfit::data::load_array(spec, a.delimiter[0]);
}

// Keras order at the file: an image array (N, H, W, C) becomes LibTorch's (N, C, H, W).
at::Tensor to_model_order(const at::Tensor& x) { return x.dim() == 4 ? x.permute({0, 3, 1, 2}).contiguous() : x; }

// The arrays of the files given for each input and output: inputs in the model's order (Keras order at
// the file), targets as they are.
Arrays load_arrays(const std::vector<std::string>& xs, const std::vector<std::string>& ys, const std::string& weights,
                   const Args& a) {
  std::vector<at::Tensor> inputs, targets;
  for (const auto& spec : xs) inputs.push_back(to_model_order(load(spec, a)));
  for (const auto& spec : ys) targets.push_back(load(spec, a));
  return Arrays(inputs, targets, load(weights, a));
}

// --loss, --loss-weights, --output-metrics as compile() takes them: a JSON list or object --loss gives one
// loss per output.
torchfit::CompileOptions compile_options(const Args& a, bool several_outputs) {
  auto json = [](const std::string& text, const char* flag) {
    try {
      return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw apps::UsageError(std::string(flag) + ": not valid JSON (" + e.what() + "): " + text);
    }
  };
  torchfit::CompileOptions c;
  if (!a.loss.empty() && a.loss.front() == '[') {
    c.output_losses(json(a.loss, "--loss"));
  } else if (!a.loss.empty() && a.loss.front() == '{' && !json(a.loss, "--loss").contains("class_name")) {
    c.output_losses(json(a.loss, "--loss"));  // {output name: loss}; a Keras loss object has a class_name
  } else {
    c.loss(a.loss);
  }
  if (!a.loss_weights.empty()) c.loss_weights(json(a.loss_weights, "--loss-weights"));
  if (!a.output_metrics.empty()) {
    if (a.metrics_given) throw apps::UsageError("--metrics and --output-metrics are both given; give one");
    c.output_metrics(json(a.output_metrics, "--output-metrics"));
  } else if (!several_outputs || a.metrics_given) {  // several outputs: no metrics unless asked for
    c.metrics(apps::comma_items(a.metrics, "--metrics"));
  }
  if (!a.weighted_metrics.empty()) {
    const char f = a.weighted_metrics.front();
    c.weighted_metrics(f == '[' || f == '{'
                           ? json(a.weighted_metrics, "--weighted-metrics")
                           : nlohmann::json(apps::comma_items(a.weighted_metrics, "--weighted-metrics")));
  }
  return c;
}

// The training arrays and the validation data: the files as they are, or (--sequence-length) the series cut
// into next-step windows with their chronological validation part.
struct Problem {
  Arrays train;
  std::optional<Arrays> validation;
  std::optional<torchfit::data::ForecastWindows> forecast;
};

Problem arrays_problem(const Args& a) {
  if (a.y.empty()) throw apps::UsageError("--y is required (the targets), unless --sequence-length cuts a series");
  Problem p{load_arrays(a.x, a.y, a.sample_weight, a), std::nullopt, std::nullopt};
  for (const auto& x : p.train.inputs())
    if (x.dim() < 2) throw apps::UsageError("--x: the inputs need a feature axis, (N, features) or more; got (N)");
  if (!a.validation_x.empty()) {
    if (a.validation_x.size() != a.x.size() || a.validation_y.size() != a.y.size()) {
      throw apps::UsageError("--validation-x/--validation-y: give as many as --x and --y (" +
                             std::to_string(a.x.size()) + " and " + std::to_string(a.y.size()) + ")");
    }
    p.validation = load_arrays(a.validation_x, a.validation_y, a.validation_sample_weight, a);
  }
  return p;
}

Problem series_problem(const Args& a) {
  if (a.x.size() != 1) throw apps::UsageError("--sequence-length: give one --x, the series");
  if (!a.y.empty() || !a.sample_weight.empty() || !a.validation_x.empty()) {
    throw apps::UsageError(
        "--sequence-length: the targets are the series' next steps; --y, --sample-weight and "
        "--validation-x are not used");
  }
  at::Tensor series = load(a.x[0], a);
  if (a.column >= 0) series = torchfit::data::series_column(series, a.column);
  torchfit::data::ForecastOptions o(a.sequence_length);
  o.sequence_stride(a.sequence_stride).sampling_rate(a.sampling_rate).target_column(a.target_column);
  o.validation_split(a.validation_split > 0 ? a.validation_split : 0.2).standardize(!a.no_standardize);
  torchfit::data::ForecastWindows w = torchfit::data::next_step_windows(series, o);
  std::cout << "series: " << series.size(0) << " steps; windows of " << a.sequence_length
            << " steps: " << w.train.samples() << " train, " << w.validation.samples() << " validation (the last "
            << o.validation_split() << " of the steps)\n";
  return Problem{w.train, w.validation, w};
}

// The forecast's validation error next to the naive last-value forecast, in the series' units.
void report_forecast(torchfit::Trainer& trainer, const torchfit::data::ForecastWindows& w, int64_t batch_size) {
  const at::Tensor predictions = trainer.predict(w.validation.x, batch_size);
  const double model = torchfit::data::mean_absolute_error(predictions, w.validation.y) * w.scale;
  const double naive = torchfit::data::last_value_mae(w.validation, w.target_column) * w.scale;
  std::cout << "forecast: val_mae " << model << " (model) vs " << naive << " (naive last value), ratio "
            << model / naive << ", over " << w.validation.samples() << " validation windows, in the series' units\n";
}

// Whether a Keras functional config lists several input or output layers (a list of [name, node, tensor]).
bool several_inputs_or_outputs(const nlohmann::json& model) {
  const nlohmann::json c = model.value("config", nlohmann::json::object());
  auto count = [&](const char* key) {
    return c.contains(key) && c[key].is_array() && !c[key].empty() && c[key][0].is_array() ? c[key].size() : 1;
  };
  return count("input_layers") > 1 || count("output_layers") > 1;
}

// The classes of an array problem are the output's units, named by their indices ("0", "1", …) as a
// class_weight file names them; one unit is the binary case's two classes.
std::map<std::string, int64_t> class_ids(const torchfit::Model& model) {
  const auto& shape = model->outputs().at(0).shape();
  const int64_t units = shape.empty() ? 1 : shape.back();
  std::map<std::string, int64_t> ids;
  for (int64_t k = 0; k < std::max<int64_t>(units, 2); ++k) ids[std::to_string(k)] = k;
  return ids;
}

int run(const Args& a) {
  const int threads = torchfit::runtime::init_process(a.threads);
  const c10::Device device = torchfit::runtime::parse_device(a.device);
  std::cout << torchfit::runtime::format_header(torchfit::runtime::environment_info(device, threads)) << "\n";
  const Problem problem = a.sequence_length > 0 ? series_problem(a) : arrays_problem(a);
  const at::Tensor& x = problem.train.x;
  // Keras order, the file's: an image array was turned to (N, C, H, W) on loading.
  torchfit::Shape input(x.sizes().begin() + 1, x.sizes().end());
  if (x.dim() == 4) input = {x.size(2), x.size(3), x.size(1)};
  at::manual_seed(a.seed);
  // One input and output: the config adapted to the file's shape; several: the config as it is.
  const nlohmann::json config = torchfit::keras::read_model_config(a.model_config);
  torchfit::Model model =
      several_inputs_or_outputs(config)
          ? torchfit::model_from_json(config)
          : torchfit::keras::model_config_for_data(
                a.model_config, torchfit::AdaptToDataOptions().input_shape(input).architecture_only(true));
  torchfit::OptimizerOptions optimizer = torchfit::OptimizerOptions::from_keras(nlohmann::json(a.optimizer));
  if (a.lr > 0) optimizer.learning_rate(a.lr);
  const bool several_outputs = model->outputs().size() > 1;
  if (several_outputs || model->inputs().size() > 1) {  // the files' order is the model's: say which is which
    const auto inputs = model->input_names(), outputs = model->output_names();
    for (size_t i = 0; i < a.x.size() && i < inputs.size(); ++i)
      std::cout << "input " << inputs[i] << " <- " << a.x[i] << "\n";
    for (size_t i = 0; i < a.y.size() && i < outputs.size(); ++i)
      std::cout << "target " << outputs[i] << " <- " << a.y[i] << "\n";
  }
  torchfit::Trainer trainer(model, compile_options(a, several_outputs).optimizer(optimizer), device);
  torchfit::FitOptions fit = torchfit::FitOptions().epochs(a.epochs).verbose(a.verbose);
  if (!problem.forecast) fit.validation_split(a.validation_split);
  if (!a.class_weight.empty()) fit.class_weight(torchfit::read_class_weight(a.class_weight, class_ids(model)));
  torchfit::ArrayOptions options =
      torchfit::ArrayOptions().batch_size(a.batch_size).shuffle(!a.no_shuffle).seed(a.seed);
  if (problem.validation) options.validation_data(*problem.validation);
  const torchfit::History history = trainer.fit(problem.train, fit, options);
  std::cout << "final:";
  for (const auto& [name, values] : history.history)
    if (!values.empty() && name != "lr") std::cout << " " << name << " " << values.back();
  std::cout << "\n";
  if (problem.forecast) report_forecast(trainer, *problem.forecast, a.batch_size);
  if (!a.save.empty()) {
    const std::filesystem::path parent = std::filesystem::path(a.save).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);  // output_file checked they can be made
    const bool keras = std::filesystem::path(a.save).extension() == ".keras";
    if (keras) {
      torchfit::save_keras_file(trainer, a.save);
    } else {
      trainer.save_checkpoint(a.save);
    }
    std::cout << "saved " << a.save << (keras ? " (Keras 3 .keras)" : " (torchfit checkpoint)") << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Fit a Keras model config on arrays from .npy/.npz/CSV files (Keras model.fit(x, y, ...)).",
               "fit_arrays"};
  add_flags(app, a);
  TORCHFIT_CLI_PARSE(app, argc, argv);
  a.metrics_given = app.count("--metrics") > 0;
  return apps::run_reporting_errors("fit_arrays", [&] { return run(a); });
}
