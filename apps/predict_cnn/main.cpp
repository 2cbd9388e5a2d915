// predict_cnn — class probabilities for a folder of unlabelled images with a train_cnn checkpoint or a
// Keras model file (.h5, .keras).
//   predict_cnn --model runs/<run>/model.ckpt --data ./data/pred
//   predict_cnn --model mnist.keras --data ./data/pred
// Writes predictions.csv (file,class,probability, then one probability column per class, then a column
// per value of a model's further outputs, "<output>" or "<output>_<k>"); when
// pred_labels.csv is beside the folder, prints the accuracy and scikit-learn's classification report and
// confusion matrix, written to report.json next to predictions.csv.
#include <CLI/CLI.hpp>

#include "../common/cli.h"
#include "labels.h"

#include <torchfit/runtime/logging.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/io/csv.h>
#include <torchfit/keras/keras_file.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/runtime/device.h>
#include <torchfit/runtime/process.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/predict.h>

namespace fs = std::filesystem;
using namespace torchfit;

namespace {

struct Args {
  std::string model_path, architecture, data_dir = "./data/pred", output = "predictions.csv", device = "cpu", labels;
  int64_t batch_size = 32;
  int64_t target_size = 0;        // 0: the model's input size
  double rescale = std::nan("");  // not given: the training run's (a checkpoint's), else 1/255
  int workers = 0, threads = 0;
  int64_t max_image_pixels = data::kMaxImagePixels;
  std::string sixteen_bit = "high_byte";
  data::ImageDataGeneratorOptions preprocessing;  // the training run's (input_preprocessing), with --rescale
};

void add_flags(CLI::App& app, Args& a) {
  using namespace apps;
  app.add_option("--model", a.model_path,
                 "Checkpoint written by train_cnn, or a Keras model file (.h5 model.save, .h5 save_weights with "
                 "--architecture, .keras), or a TensorFlow.js folder or its model.json")
      ->required()
      ->check(model_file_or_tfjs_folder());
  app.add_option("--architecture", a.architecture,
                 "Keras model JSON (model.to_json()) for a weights-only .h5 file (model.save_weights)")
      ->check(existing_file("architecture JSON"));
  app.add_option("--target-size", a.target_size,
                 "Height and width the images are resized to for a model whose input size is unknown (a Keras "
                 "input (None, None, 3), e.g. a fully convolutional model); default: the size it was trained at "
                 "(a checkpoint), required for such a Keras file. A model of fixed size takes only its own")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  app.add_option("--rescale", a.rescale,
                 "Factor the pixel values (0-255) are multiplied by (Keras rescale); default: the one the "
                 "training run used (train_cnn --rescale; its samplewise centring too), as checkpoints and the Keras "
                 "files torchfit writes record it; for other Keras files none when the model scales its own input (a "
                 "Rescaling layer first), else 1/255")
      ->default_str("the training run's")
      ->transform(positive_fraction());
  app.add_option("--data", a.data_dir, "Folder of images (flat, no class sub-folders)")
      ->capture_default_str()
      ->check(existing_directory());
  app.add_option("--output", a.output, "CSV to write: file,class,probability and one probability column per class")
      ->capture_default_str()
      ->check(output_file());
  app.add_option("--labels", a.labels,
                 "CSV with the true classes: filename and class_name (or class_index) columns (default: "
                 "<data>_labels.csv beside the folder, e.g. data/pred_labels.csv)")
      ->check(existing_file("labels file"));
  add_device_flag(app, a.device);
  add_batch_size_flag(app, a.batch_size);
  add_workers_flag(app, a.workers, "Loader threads (0 = CPU cores)");
  add_threads_flag(app, a.threads, "LibTorch threads (0 = CPU cores)");
  add_max_image_pixels_flag(app, a.max_image_pixels);
  add_sixteen_bit_flag(app, a.sixteen_bit);
}

// Keras idiom for a flat folder: flow_from_directory(parent, classes=[folder], class_mode=None).
std::unique_ptr<data::DirectoryIterator> flat_folder_source(const fs::path& dir, const std::vector<int64_t>& in,
                                                            const Args& a) {
  data::ImageDataGenerator gen(a.preprocessing);
  auto flow = data::FlowOptions()
                  .target_size({in[0], in[1]})
                  .color_mode(in[2] == 1   ? "grayscale"
                              : in[2] == 4 ? "rgba"
                                           : "rgb")
                  .classes({dir.filename().string()})
                  .class_mode("none")
                  .batch_size(a.batch_size)
                  .shuffle(false)
                  .workers(a.workers)
                  .max_image_pixels(a.max_image_pixels)
                  .sixteen_bit(a.sixteen_bit);
  return gen.flow_from_directory(dir.parent_path().string(), flow);
}

// A model trained under a policy this device cannot run (mixed_float16 on the CPU) predicts in float32:
// the weights are float32 under every policy. Said in a warning, never silently.
void run_policy_here(Model& model, const c10::Device& device, const std::string& path) {
  try {
    mixed_precision::check_supported(model->dtype_policy(), device);
  } catch (const ConfigError& e) {
    torchfit::logger().warn("checkpoint '{}' was trained under {}; predicting in float32 here ({})", path,
                            model->dtype_policy().name(), e.what());
    model->set_dtype_policy("float32");
    return;
  }
  if (model->dtype_policy().is_mixed())
    torchfit::logger().info("predicting under the checkpoint's dtype policy {}", model->dtype_policy().name());
}

struct Prediction {
  std::string file, cls;  // cls: the class's name, its index as text when the model has no name for it
  int64_t index;          // the class's index
  double probability;
  std::vector<double> all;   // every class's probability, in index order
  std::vector<double> more;  // a model with several outputs: the other outputs' values, flattened in order
};

// The column names of the outputs after the first: "<output>" for one value, else "<output>_<k>".
std::vector<std::string> more_columns(const Model& model, const std::vector<at::Tensor>& outs) {
  std::vector<std::string> names;
  const auto output_names = model->output_names();
  for (size_t o = 1; o < outs.size(); ++o) {
    const int64_t values = outs[o].numel() / std::max<int64_t>(1, outs[o].size(0));
    for (int64_t k = 0; k < values; ++k)
      names.push_back(values == 1 ? output_names.at(o) : output_names.at(o) + "_" + std::to_string(k));
  }
  return names;
}

std::vector<Prediction> predict_folder(const fs::path& dir, const Args& a, const predict_cnn::ModelClasses& classes,
                                       Model& model, std::vector<std::string>& more) {
  Shape in = model->input_shape();
  if (in.size() != 3) throw ConfigError("checkpoint '" + a.model_path + "' is not an image model");
  if (a.target_size > 0 && (in[0] != a.target_size || in[1] != a.target_size)) {
    if (model->unknown_input_axes().size() != 2) {
      throw apps::UsageError("--target-size " + std::to_string(a.target_size) + ": the model '" + a.model_path +
                             "' takes images of " + format_shape(in) + " only");
    }
    in[0] = in[1] = a.target_size;  // the model takes any size; Model::forward checks its layers at this one
  }
  auto source = flat_folder_source(dir, in, a);
  std::vector<int64_t> indices;
  std::vector<at::Tensor> outs;  // every output (Keras's predict); the first is the class scores
  try {
    outs = predict_outputs(*model, *source, runtime::parse_device(a.device), 0, &indices);
  } catch (const NumericError& e) {
    throw NumericError("checkpoint '" + a.model_path + "': " + e.what());
  }
  const at::Tensor probs = outs.at(0);
  more = more_columns(model, outs);
  auto [best_p, best_k] = probs.max(1);
  const auto files = source->filenames();
  // A file that failed to decode was stood in for by another: its row would be that file's prediction.
  const std::set<int64_t> replaced = source->replaced_samples();
  for (const int64_t i : replaced) torchfit::logger().warn("no prediction for {}: it cannot be decoded", files.at(i));
  std::vector<Prediction> out;
  for (size_t r = 0; r < indices.size(); ++r) {
    if (replaced.count(indices[r])) continue;
    // filenames() are relative to the parent ("pred/a/001.png", as Keras): report them relative to --data.
    const fs::path rel = fs::path(files.at(static_cast<size_t>(indices[r])));
    const int64_t k = best_k[static_cast<int64_t>(r)].item<int64_t>();
    out.push_back({rel.lexically_relative(*rel.begin()).generic_string(),
                   classes.label(k),
                   k,
                   best_p[static_cast<int64_t>(r)].item<double>(),
                   {}});
    const at::Tensor row = probs[static_cast<int64_t>(r)].to(at::kDouble).contiguous();
    out.back().all.assign(row.data_ptr<double>(), row.data_ptr<double>() + row.numel());
    for (size_t o = 1; o < outs.size(); ++o) {
      const at::Tensor v = outs[o][static_cast<int64_t>(r)].to(at::kDouble).contiguous().reshape({-1});
      out.back().more.insert(out.back().more.end(), v.data_ptr<double>(), v.data_ptr<double>() + v.numel());
    }
  }
  return out;
}

// RFC 4180 through libcsv (a file name with a comma or a quote is quoted); written atomically.
// Columns: file, class, probability, then one per class headed by its name (its index when unnamed), then
// a model's further outputs (`more`: "<output>" or "<output>_<k>").
void write_predictions(const std::string& output, const std::vector<Prediction>& rows,
                       const predict_cnn::ModelClasses& classes, const std::vector<std::string>& more) {
  std::vector<std::string> header = {"file", "class", "probability"};
  for (int64_t k = 0; k < classes.count; ++k) header.push_back(classes.label(k));
  header.insert(header.end(), more.begin(), more.end());
  std::string csv = io::csv_line(header);
  auto number = [](double v) {
    std::ostringstream s;  // the stream's default: 6 significant digits
    s << v;
    return s.str();
  };
  for (const auto& p : rows) {
    std::vector<std::string> cells = {p.file, p.cls, number(p.probability)};
    for (double v : p.all) cells.push_back(number(v));
    for (double v : p.more) cells.push_back(number(v));
    csv += io::csv_line(cells);
  }
  io::write_text_atomically(output, csv);
}

// The labels file read after predicting: --labels, else <data>_labels.csv beside the --data folder.
fs::path labels_file(const Args& a, const fs::path& dir) {
  return a.labels.empty() ? dir.parent_path() / (dir.filename().string() + "_labels.csv") : fs::path(a.labels);
}

// The preprocessing the training run gave its images outside the model (CheckpointInfo::preprocessing:
// rescale, samplewise centre/std; recorded in checkpoints and in the Keras files torchfit writes), so
// predictions see pixels as training did. A file without it (one Keras wrote, an older checkpoint): no
// scaling when the model scales its own input (a Rescaling layer first, Keras 3's way), else Keras's usual
// rescale 1/255, each said in the log. --rescale replaces the rescale.
data::ImageDataGeneratorOptions input_preprocessing(const Args& a, const saving::CheckpointInfo& info,
                                                    const ModelImpl& model) {
  const data::ImageDataGeneratorOptions keras_usual = data::ImageDataGeneratorOptions().rescale(1.0 / 255);
  data::ImageDataGeneratorOptions o = keras_usual;
  if (!info.preprocessing.is_null()) {
    o = data::preprocessing_from_config(info.preprocessing);
  } else if (scales_own_input(model)) {
    o = data::ImageDataGeneratorOptions();
    if (std::isnan(a.rescale))
      torchfit::logger().info(
          "'{}' scales its own input (a Rescaling or Normalization layer before its first "
          "weights): feeding the 0-255 pixel values (--rescale sets a factor)",
          a.model_path);
  } else if (std::isnan(a.rescale)) {
    torchfit::logger().info(
        "'{}' records no preprocessing: rescale 1/255 assumed, Keras's usual (--rescale 1 "
        "for a model trained on the 0-255 values)",
        a.model_path);
  }
  if (!std::isnan(a.rescale)) return o.rescale(a.rescale);
  if (!info.preprocessing.is_null() && data::options_text(o) != data::options_text(keras_usual))
    torchfit::logger().info("input preprocessing {} (the training run's, from '{}')", data::options_text(o),
                            a.model_path);
  return o;
}

// The folders --output may not overwrite a file in: --data, and a TF.js --model's folder (its shards).
std::vector<apps::FlagPath> model_folders(const Args& a) {
  std::vector<apps::FlagPath> dirs = {{"--data", a.data_dir}};
  if (keras::is_tfjs_model(a.model_path)) {
    const fs::path m(a.model_path);
    dirs.push_back({"--model (a TF.js folder)", fs::is_directory(m) ? m.string() : m.parent_path().string()});
  }
  return dirs;
}

int run(Args& a) {
  fs::path dir = fs::absolute(a.data_dir).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  const fs::path labels_path = labels_file(a, dir);
  // The implicit labels file counts as an input too, whether or not it exists yet: predictions written
  // there would be read back as the ground truth.
  apps::check_output_is_not_input(
      {"--output", a.output},
      {{"--model", a.model_path},
       {"--architecture", a.architecture},
       {a.labels.empty() ? "labels (<data>_labels.csv, the default of --labels)" : "--labels", labels_path.string()}},
      model_folders(a));
  runtime::init_process(a.threads);
  {  // --output's folder must take the file before the work is done
    const fs::path out_dir = fs::path(a.output).parent_path();
    io::ensure_writable_directory(out_dir.empty() ? std::string(".") : out_dir.string());
  }
  saving::CheckpointInfo info;
  std::optional<InputSize> size;
  if (a.target_size > 0) size = InputSize{a.target_size, a.target_size};
  Model model = saving::load_checkpoint_or_keras(a.model_path, a.architecture, &info, size);
  a.preprocessing = input_preprocessing(a, info, *model);
  run_policy_here(model, runtime::parse_device(a.device), a.model_path);
  // The first output holds the class scores (a model with several outputs: the others follow as columns).
  const auto& first = model->outputs().at(0).shape();
  if (first.size() != 1) {
    throw ConfigError("checkpoint '" + a.model_path +
                      "': predict_cnn writes class scores, but the model's first output " +
                      model->output_names().at(0) + " is " + format_shape(first) +
                      " per image (a segmentation or sequence output); predict it with Trainer::predict_outputs");
  }
  predict_cnn::ModelClasses classes{std::vector<std::string>(info.class_indices.size()),
                                    first.empty() ? 1 : first.back()};
  for (const auto& [name, idx] : info.class_indices) classes.names.at(static_cast<size_t>(idx)) = name;
  std::vector<std::string> more;
  const auto rows = predict_folder(dir, a, classes, model, more);
  write_predictions(a.output, rows, classes, more);
  std::cout << "Predicted " << rows.size() << " images → " << a.output << "\n";
  if (!fs::is_regular_file(labels_path)) return 0;
  std::vector<std::pair<std::string, int64_t>> predicted;
  for (const auto& p : rows) predicted.emplace_back(p.file, p.index);
  // After the predictions are on disk: a bad labels file costs the accuracy only (an error, exit 1).
  const auto truth = predict_cnn::read_labels(labels_path, classes);
  predict_cnn::report_accuracy(truth, predicted, labels_path);
  predict_cnn::write_report(truth, predicted, classes, fs::path(a.output).parent_path() / "report.json");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Predict classes for a folder of images with a torchfit checkpoint or a Keras model file.",
               "predict_cnn"};
  add_flags(app, a);
  TORCHFIT_CLI_PARSE(app, argc, argv);
  return apps::run_reporting_errors("predict_cnn", [&] { return run(a); });
}
