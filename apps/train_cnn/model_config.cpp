#include "model_config.h"

#include <torchfit/runtime/logging.h>

#include <torchfit/error.h>
#include <torchfit/keras/model_config_file.h>
#include <filesystem>

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
  std::vector<std::string> changes;
  torchfit::Model model = torchfit::keras::model_config_for_data(
      path, torchfit::AdaptToDataOptions().input_shape({size, size, channels}).classes(classes), &changes);
  for (const auto& change : changes) torchfit::logger().info("model config '{}': {}", path, change);
  return model;
}

}  // namespace train_cnn
