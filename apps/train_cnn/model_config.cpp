#include "model_config.h"

#include <torchfit/runtime/logging.h>

#include <filesystem>
#include <fstream>

#include <torchfit/error.h>
#include <torchfit/model/keras_json.h>

#include "../common/cli.h"

namespace fs = std::filesystem;

namespace train_cnn {

std::string resolve_model_config(const std::string& file) {
  std::string problem;
  const auto status = torchfit::apps::path_status(file, &problem);
  if (fs::is_regular_file(status)) return file;
  if (fs::is_directory(status)) throw torchfit::ConfigError("'" + file + "' is a directory, not a model config file");
  if (!problem.empty()) throw torchfit::ConfigError(problem);
  std::string tried = "'" + file + "'";
  if (!fs::path(file).has_parent_path()) {
    std::vector<fs::path> dirs;
    std::error_code ec;
    const auto exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
      dirs.push_back(exe.parent_path());  // the build tree
      dirs.push_back(exe.parent_path().parent_path() / "share" / "torchfit" /
                     "models");  // <prefix>/bin → <prefix>/share
    }
#ifdef TORCHFIT_MODELS_DIR
    dirs.emplace_back(TORCHFIT_MODELS_DIR);
#endif
    for (const auto& d : dirs) {
      const auto candidate = d / file;
      if (fs::is_regular_file(candidate, ec)) return candidate.string();
      tried += ", '" + candidate.string() + "'";
    }
  }
  throw torchfit::ConfigError("file not found (tried " + tried + ")");
}

torchfit::Model load_model_config(const std::string& path, int64_t size, int64_t channels, int64_t classes) {
  const std::string where = "model config '" + path + "'";
  std::ifstream in(path);
  if (!in) throw torchfit::ConfigError(where + ": cannot be read");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw torchfit::ConfigError(where + ": not valid JSON: " + e.what());
  }
  try {
    auto* layers = json.is_object() && json.contains("config") && json["config"].is_object() &&
                           json["config"].contains("layers") && json["config"]["layers"].is_array()
                       ? &json["config"]["layers"]
                       : nullptr;
    if (!layers || layers->empty()) throw torchfit::ConfigError("expected config.layers, a non-empty array");
    for (size_t i = 0; i < layers->size(); ++i) {  // before anything reads them (the rest names the layer too)
      const auto& l = (*layers)[i];
      const bool ok = l.is_object() && l.contains("class_name") && l["class_name"].is_string() &&
                      (!l.contains("config") ||
                       (l["config"].is_object() && (!l["config"].contains("name") || l["config"]["name"].is_string())));
      if (!ok) {
        throw torchfit::ConfigError(
            "config.layers[" + std::to_string(i) +
            "]: expected a layer object {\"class_name\": \"<class>\", \"config\": {\"name\": ...}}, got " + l.dump());
      }
    }
    // The data decides the input (size × size × channels images) and the output (one unit per class).
    auto& first = (*layers)[0];
    if (!first.contains("config") || !first["config"].is_object()) first["config"] = nlohmann::json::object();
    const nlohmann::json input = {size, size, channels};
    if (first.value("class_name", std::string()) == "InputLayer") {
      // Keras's InputLayer: batch_input_shape [null, H, W, C] (tf.keras 2.x) or batch_shape (Keras 3).
      auto& c = first["config"];
      const char* key = c.contains("batch_shape") ? "batch_shape" : "batch_input_shape";
      const nlohmann::json batch = {nullptr, size, size, channels};
      if (c.value(key, nlohmann::json()) != batch) {
        torchfit::logger().info("{}: {} {} -> {} (--target-size)", where, key, c.value(key, nlohmann::json()).dump(),
                                batch.dump());
        c[key] = batch;
      }
    } else if (first["config"].value("input_shape", nlohmann::json()) != input) {
      torchfit::logger().info("{}: input_shape {} -> {} (--target-size)", where,
                              first["config"].value("input_shape", nlohmann::json()).dump(), input.dump());
      first["config"]["input_shape"] = input;
    }
    nlohmann::json* last_dense = nullptr;
    for (auto& l : *layers) {
      if (l.value("class_name", std::string()) == "Dense") last_dense = &l;
    }
    if (!last_dense) throw torchfit::ConfigError("no Dense layer to produce one output per class");
    auto& units = (*last_dense)["config"]["units"];
    if (units != classes) {
      torchfit::logger().info("{}: last Dense layer '{}' units {} -> {} (classes in the training data)", where,
                              (*last_dense)["config"].value("name", std::string("?")), units.dump(), classes);
      units = classes;
    }
    torchfit::Model model = torchfit::model_from_json(json);
    if (model->output_shape() != torchfit::Shape{classes}) {
      throw torchfit::ConfigError("the model outputs " + torchfit::format_shape(model->output_shape()) +
                                  " but the data has " + std::to_string(classes) +
                                  " classes: the last layer must output (None, classes)");
    }
    return model;
  } catch (const torchfit::ConfigError& e) {
    throw torchfit::ConfigError(where + ": " + e.what());
  } catch (const std::exception& e) {
    throw torchfit::ConfigError(where + ": " + e.what());
  }
}

}  // namespace train_cnn
