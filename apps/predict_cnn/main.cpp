// predict_cnn — class probabilities for a folder of unlabelled images with a train_cnn checkpoint.
//   predict_cnn --model runs/<run>/model.ckpt --data ./data/pred
// Writes predictions.csv (file,class,probability); prints accuracy when pred_labels.csv is beside the folder.
#include <CLI/CLI.hpp>

#include "../common/cli.h"
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/io/checkpoint.h>
#include <torchfit/runtime/device.h>
#include <torchfit/runtime/process.h>
#include <torchfit/training/trainer.h>

namespace fs = std::filesystem;
using namespace torchfit;

int main(int argc, char** argv) {
  std::string model_path, data_dir = "./data/pred", output = "predictions.csv", device_spec = "cpu", labels;
  int64_t batch_size = 32;
  int workers = 0, threads = 0;
  CLI::App app{"Predict classes for a folder of images with a torchfit checkpoint.", "predict_cnn"};
  app.add_option("--model", model_path, "Checkpoint written by train_cnn")->required();
  app.add_option("--data", data_dir, "Folder of images (flat, no class sub-folders)")->capture_default_str();
  app.add_option("--output", output, "CSV to write: file,class,probability")->capture_default_str();
  app.add_option("--labels", labels, "CSV file,class with the true classes (default: <data>/../pred_labels.csv)");
  app.add_option("--device", device_spec, "cpu | cuda | cuda:N | auto")->capture_default_str();
  app.add_option("--batch-size", batch_size, "Images per batch")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--workers", workers, "Loader threads (0 = CPU cores)")->capture_default_str()->check(CLI::Range(0, 4096));
  app.add_option("--threads", threads, "LibTorch threads (0 = CPU cores)")->capture_default_str()->check(CLI::Range(0, 4096));
  TORCHFIT_CLI_PARSE(app, argc, argv);
  if (!fs::is_regular_file(model_path)) {
    std::cerr << "predict_cnn: --model: checkpoint '" << model_path << "' does not exist\n";
    return 2;
  }
  fs::path dir = fs::absolute(data_dir).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  if (!fs::is_directory(dir)) {
    std::cerr << "predict_cnn: --data: directory '" << data_dir << "' does not exist\n";
    return 2;
  }
  try {
    runtime::init_process(threads);
    const auto device = runtime::parse_device(device_spec);
    {  // --output's folder must take the file before the work is done
      const fs::path out_dir = fs::path(output).parent_path();
      io::ensure_writable_directory(out_dir.empty() ? std::string(".") : out_dir.string());
    }
    io::CheckpointInfo info;
    Sequential model = io::load_model(model_path, &info);
    const auto& in = model->input_shape();
    if (in.size() != 3) throw ConfigError("checkpoint '" + model_path + "' is not an image model");
    std::vector<std::string> names(info.class_indices.size());
    for (const auto& [name, idx] : info.class_indices) names.at(static_cast<size_t>(idx)) = name;

    // Keras idiom for a flat folder: flow_from_directory(parent, classes=[folder], class_mode=None).
    data::ImageDataGenerator gen(data::ImageDataGeneratorOptions().rescale(1.0 / 255));
    auto flow = data::FlowOptions()
                    .target_size({in[0], in[1]})
                    .color_mode(in[2] == 1 ? "grayscale" : in[2] == 4 ? "rgba" : "rgb")
                    .classes({dir.filename().string()})
                    .class_mode("none")
                    .batch_size(batch_size)
                    .shuffle(false)
                    .workers(workers);
    auto it = gen.flow_from_directory(dir.parent_path().string(), flow);
    Trainer trainer(model, CompileOptions(), device);
    std::vector<int64_t> indices;
    at::Tensor probs = trainer.predict(*it, 0, &indices);
    auto [best_p, best_k] = probs.max(1);
    const auto files = it->filenames();

    std::map<std::string, std::string> truth;
    fs::path labels_path = labels.empty() ? dir.parent_path() / (dir.filename().string() + "_labels.csv") : fs::path(labels);
    if (fs::is_regular_file(labels_path)) {
      // Header names the columns: filename|file, and class_name|class (or class_index).
      std::ifstream f(labels_path);
      std::string line;
      std::getline(f, line);
      auto split = [](const std::string& l) {
        std::vector<std::string> out;
        std::stringstream ss(l);
        for (std::string x; std::getline(ss, x, ',');) out.push_back(x);
        return out;
      };
      const auto header = split(line);
      int file_col = -1, name_col = -1, index_col = -1;
      for (int i = 0; i < static_cast<int>(header.size()); ++i) {
        if (header[i] == "filename" || header[i] == "file") file_col = i;
        if (header[i] == "class_name" || header[i] == "class") name_col = i;
        if (header[i] == "class_index") index_col = i;
      }
      if (file_col < 0 || (name_col < 0 && index_col < 0)) {
        throw IoError("labels file '" + labels_path.string() +
                      "' needs a header with filename and class_name (or class_index) columns");
      }
      while (std::getline(f, line)) {
        const auto cells = split(line);
        const int need = std::max(file_col, std::max(name_col, index_col));
        if (static_cast<int>(cells.size()) <= need) continue;
        std::string cls = name_col >= 0 ? cells[static_cast<size_t>(name_col)] : "";
        if (cls.empty() && index_col >= 0) {
          const auto k = std::stoul(cells[static_cast<size_t>(index_col)]);
          cls = k < names.size() ? names[k] : std::to_string(k);
        }
        truth[cells[static_cast<size_t>(file_col)]] = cls;
      }
    } else if (!labels.empty()) {
      throw IoError("--labels: '" + labels + "' does not exist");
    }

    std::ostringstream csv;
    csv << "file,class,probability\n";
    int64_t correct = 0, labelled = 0, unknown_class = 0;
    std::string unknown_example;
    for (size_t r = 0; r < indices.size(); ++r) {
      // filenames() are relative to the parent ("pred/a/001.png", as Keras): report them relative to --data.
      const fs::path rel = fs::path(files.at(static_cast<size_t>(indices[r])));
      const std::string file = rel.lexically_relative(*rel.begin()).generic_string();
      const int64_t k = best_k[static_cast<int64_t>(r)].item<int64_t>();
      const std::string cls = k < static_cast<int64_t>(names.size()) && !names[k].empty() ? names[k] : std::to_string(k);
      csv << file << "," << cls << "," << best_p[static_cast<int64_t>(r)].item<double>() << "\n";
      auto t = truth.find(file);
      if (t != truth.end()) {
        ++labelled;
        correct += t->second == cls;
        if (!info.class_indices.empty() && !info.class_indices.count(t->second)) {
          ++unknown_class;
          if (unknown_example.empty()) unknown_example = t->second;
        }
      }
    }
    io::write_text_atomically(output, csv.str());
    std::cout << "Predicted " << indices.size() << " images → " << output << "\n";
    if (unknown_class > 0) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      spdlog::warn("{} of {} labelled images have a class the model was not trained on (e.g. '{}'; model classes: {}): "
                   "the accuracy below counts them as wrong",
                   unknown_class, labelled, unknown_example, known);
    }
    if (labelled > 0) {
      std::printf("Accuracy on %lld labelled images (%s): %.4f\n", static_cast<long long>(labelled),
                  labels_path.string().c_str(), static_cast<double>(correct) / static_cast<double>(labelled));
    }
    return 0;
  } catch (const c10::Error& e) {
    spdlog::error("{}", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
