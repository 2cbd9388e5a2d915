// Architecture files read and built for the data (model_config_file.h).
#include <torchfit/keras/model_config_file.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include <ATen/CPUGeneratorImpl.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_json.h>

namespace torchfit::keras {
namespace {

using Json = nlohmann::json;

// The layer list of a Sequential config (torchfit's and tf.keras's config.layers, Keras 1's bare list).
Json* sequential_layers(Json& json) {
  if (!json.is_object() || json.value("class_name", std::string()) != "Sequential" || !json.contains("config"))
    return nullptr;
  Json& config = json["config"];
  if (config.is_array()) return &config;
  if (config.is_object() && config.contains("layers") && config["layers"].is_array()) return &config["layers"];
  return nullptr;
}

// A Sequential whose first layer declares no input shape is built at the data's (a functional config
// always has its InputLayer).
void declare_missing_input(Json& json, const Shape& input) {
  Json* layers = sequential_layers(json);
  if (input.empty() || !layers || layers->empty() || !(*layers)[0].is_object()) return;
  Json& first = (*layers)[0];
  if (first.value("class_name", std::string()) == "InputLayer") return;
  if (!first.contains("config") || !first["config"].is_object()) first["config"] = Json::object();
  for (const char* key : {"input_shape", "batch_input_shape", "batch_shape", "input_dim"}) {
    if (first["config"].contains(key)) return;
  }
  first["config"]["input_shape"] = input;
}

at::Tensor rng_state(at::Generator& gen) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void set_rng_state(at::Generator& gen, const at::Tensor& state) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

}  // namespace

std::string find_model_config(const std::string& file, const std::vector<std::string>& more_dirs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(file, ec);
  if (fs::is_regular_file(status)) return file;
  if (fs::is_directory(status)) throw ConfigError("'" + file + "' is a directory, not a model config file");
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    throw ConfigError("'" + file + "': " + ec.message());
  std::string tried = "'" + file + "'";
  if (!fs::path(file).has_parent_path()) {
    std::vector<fs::path> dirs;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) dirs = {exe.parent_path(), exe.parent_path().parent_path() / "share" / "torchfit" / "models"};
    dirs.insert(dirs.end(), more_dirs.begin(), more_dirs.end());
    for (const fs::path& dir : dirs) {
      const fs::path candidate = dir / file;
      if (fs::is_regular_file(candidate, ec)) return candidate.string();
      tried += ", '" + candidate.string() + "'";
    }
  }
  throw ConfigError("file not found (tried " + tried + ")");
}

Json read_model_config(const std::string& path) {
  const std::string where = "model config '" + path + "'";
  std::ifstream in(path);
  if (!in) throw ConfigError(where + ": cannot be read");
  try {
    return Json::parse(in);
  } catch (const std::exception& e) {
    std::ifstream raw(path, std::ios::binary);
    char head[4] = {};
    raw.read(head, 4);
    if (std::string(head, 4) == "\x89HDF" || std::string(head, 2) == "PK") {
      throw ConfigError(where +
                        " is a model file (HDF5 or zip: a Keras .h5/.keras or a checkpoint), not an architecture "
                        "JSON: load it with load_checkpoint_or_keras, or write its architecture with convert_model");
    }
    throw ConfigError(where + ": not valid JSON: " + e.what());
  }
}

Model model_config_for_data(const std::string& path, AdaptToDataOptions options, std::vector<std::string>* changes) {
  Json json = read_model_config(path);
  try {
    declare_missing_input(json, options.input_shape());
    std::optional<InputSize> size;
    if (options.input_shape().size() == 3) size = InputSize{options.input_shape()[0], options.input_shape()[1]};
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    const at::Tensor before = rng_state(gen);
    Model as_written = model_from_json(json, size);
    const at::Tensor after = rng_state(gen);
    set_rng_state(gen, before);  // a clone draws what a direct build would
    Model adapted = adapt_to_data(as_written, options.architecture_only(true), changes);
    if (adapted.get() == as_written.get()) set_rng_state(gen, after);
    return adapted;
  } catch (const std::exception& e) {
    throw ConfigError("model config '" + path + "': " + e.what());
  }
}

}  // namespace torchfit::keras
