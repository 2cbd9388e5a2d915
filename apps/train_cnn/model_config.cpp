#include "model_config.h"

#include <torchfit/runtime/logging.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include <ATen/CPUGeneratorImpl.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_json.h>

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

namespace {

using Json = nlohmann::json;

// The layer list of a Sequential config (torchfit's and tf.keras's config.layers, Keras 1's bare list).
Json* sequential_layers(Json& json) {
  if (json.value("class_name", std::string()) != "Sequential" || !json.contains("config")) return nullptr;
  Json& config = json["config"];
  if (config.is_array()) return &config;
  if (config.is_object() && config.contains("layers") && config["layers"].is_array()) return &config["layers"];
  return nullptr;
}

// A Sequential whose first layer declares no input shape gets the data's (a functional config always has
// its InputLayer): the file's own shapes build the model once, the data's shapes are set afterwards.
void declare_missing_input(Json& json, const Json& input) {
  Json* layers = sequential_layers(json);
  if (!layers || layers->empty() || !(*layers)[0].is_object()) return;
  Json& first = (*layers)[0];
  if (first.value("class_name", std::string()) == "InputLayer") return;
  if (!first.contains("config") || !first["config"].is_object()) first["config"] = Json::object();
  for (const char* key : {"input_shape", "batch_input_shape", "batch_shape", "input_dim"}) {
    if (first["config"].contains(key)) return;
  }
  first["config"]["input_shape"] = input;
}

// The Dense layer whose units are the class scores (torchfit::class_scores_node), or nullptr.
std::shared_ptr<torchfit::Layer> class_scores_dense(const torchfit::Model& model) {
  const auto node = torchfit::class_scores_node(*model);
  return node ? node->layer : nullptr;
}

// `model`'s JSON with the data's input (size, size, channels) and `classes` units in the class-score Dense.
Json for_the_data(const torchfit::Model& model, const std::string& where, const Json& input, int64_t classes) {
  Json json = model->to_json();  // Sequential: torchfit's layer list; otherwise tf.keras 2.x functional
  Json& config = json["config"];
  for (auto& l : config["layers"]) {
    Json& c = l["config"];
    const bool is_input = l["class_name"] == "InputLayer";
    if (!is_input && !(json["class_name"] == "Sequential" && &l == &config["layers"][0])) continue;
    const char* key = is_input ? "batch_input_shape" : "input_shape";
    Json want = input;
    if (is_input) want.insert(want.begin(), nullptr);
    if (c.value(key, Json()) != want) {
      torchfit::logger().info("{}: {} {} -> {} (--target-size)", where, key, c.value(key, Json()).dump(), want.dump());
      c[key] = want;
    }
  }
  const auto dense = class_scores_dense(model);
  if (!dense) return json;  // the output check after the rebuild names the layer
  for (auto& l : config["layers"]) {
    if (l["config"].value("name", std::string()) != dense->name()) continue;
    Json& units = l["config"]["units"];
    if (units != classes) {
      torchfit::logger().info("{}: last Dense layer '{}' units {} -> {} (classes in the training data)", where,
                              dense->name(), units.dump(), classes);
      units = classes;
    }
  }
  return json;
}

torchfit::Model build_for_the_data(Json json, const std::string& where, int64_t size, int64_t channels,
                                   int64_t classes) {
  const Json input = {size, size, channels};
  declare_missing_input(json, input);
  // Built as the file says first (any format model_from_json reads), with the random state kept, so the
  // model for the data draws the same initial weights as one built directly.
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  at::Tensor state;
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    state = gen.get_state();
  }
  torchfit::Model as_written = torchfit::model_from_json(json);
  if (as_written->inputs().size() != 1 || as_written->outputs().size() != 1) {
    throw torchfit::ConfigError("'" + as_written->model_name() + "' has " +
                                std::to_string(as_written->inputs().size()) + " inputs and " +
                                std::to_string(as_written->outputs().size()) +
                                " outputs; train_cnn trains models with one image input and one output "
                                "(several are built and run through the API: docs/extending.md)");
  }
  if (!class_scores_dense(as_written) && as_written->output_shape() != torchfit::Shape{classes}) {
    const auto& out = as_written->outputs()[0].layer();
    throw torchfit::ConfigError("no Dense layer to produce one output per class: the output layer '" + out->name() +
                                "' (" + out->class_name() +
                                ") is not a Dense (or an Activation, Softmax or Dropout after one)");
  }
  Json fitted = for_the_data(as_written, where, input, classes);
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state);
  }
  return torchfit::model_from_json(fitted);
}

}  // namespace

torchfit::Model load_model_config(const std::string& path, int64_t size, int64_t channels, int64_t classes) {
  const std::string where = "model config '" + path + "'";
  std::ifstream in(path);
  if (!in) throw torchfit::ConfigError(where + ": cannot be read");
  Json json;
  try {
    json = Json::parse(in);
  } catch (const std::exception& e) {
    std::ifstream raw(path, std::ios::binary);
    char head[4] = {};
    raw.read(head, 4);
    if (std::string(head, 4) == "\x89HDF" || std::string(head, 2) == "PK") {
      throw torchfit::ConfigError(where +
                                  " is a model file (HDF5 or zip: a Keras .h5/.keras or a checkpoint), not an "
                                  "architecture JSON: start from it with --load-model, or write its architecture "
                                  "with convert_model FILE arch.json");
    }
    throw torchfit::ConfigError(where + ": not valid JSON: " + e.what());
  }
  try {
    torchfit::Model model = build_for_the_data(std::move(json), where, size, channels, classes);
    if (model->output_shape() != torchfit::Shape{classes}) {
      throw torchfit::ConfigError("the model outputs " + torchfit::format_shape(model->output_shape()) +
                                  " but the data has " + std::to_string(classes) +
                                  " classes: the last layer must output (None, classes)");
    }
    return model;
  } catch (const std::exception& e) {
    throw torchfit::ConfigError(where + ": " + e.what());
  }
}

}  // namespace train_cnn
