// The run-folder policy of RunLoggerOptions (run_logger.h): automatic names and continued runs.
#include <ctime>
#include <filesystem>
#include <fstream>

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>
#include <torchfit/training/run_logger.h>

namespace fs = std::filesystem;

namespace torchfit {
namespace {

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &local);
  return buf;
}

fs::path resolved(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? fs::absolute(path).lexically_normal() : p;
}

}  // namespace

std::string RunLoggerOptions::automatic_run_dir(const std::string& tag, bool create, const std::string& root) {
  const std::string base = (fs::path(root) / (timestamp() + "-" + tag)).string();
  if (!create) return base;
  std::error_code ec;
  fs::create_directories(root, ec);
  for (int k = 1;; ++k) {
    const std::string dir = k == 1 ? base : base + "-" + std::to_string(k);
    if (fs::create_directory(dir, ec)) return dir;
    if (ec) throw IoError("cannot create the run folder '" + dir + "': " + ec.message());
  }
}

bool RunLoggerOptions::continue_run_of(const std::string& checkpoint) {
  if (checkpoint.empty()) return false;
  const fs::path ckpt = resolved(checkpoint), dir = resolved(run_dir_);
  bool same = ckpt.parent_path() == dir;
  if (!same) {
    std::ifstream in(dir / "run.json");
    const auto j = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
    const auto* args = j.is_object() && j.contains("arguments") ? &j["arguments"] : nullptr;
    if (args && args->is_object() && args->contains("checkpoint") && (*args)["checkpoint"].is_string()) {
      const auto saved = (*args)["checkpoint"].get<std::string>();
      same = !saved.empty() && resolved(saved) == ckpt;
    }
  }
  if (same) append_ = true;
  return same;
}

void RunLoggerOptions::prepare(const std::string& resumed_checkpoint) {
  RunLogger::check_not_in_use(run_dir_);
  for (const auto& dir : also_lock_) RunLogger::check_not_in_use(dir);
  std::error_code ec;
  if (!fs::exists(fs::path(run_dir_) / "steps.csv", ec)) return;
  if (continue_run_of(resumed_checkpoint)) {
    torchfit::logger().info("run folder '{}' holds the run of the checkpoint '{}': its run files are continued",
                            run_dir_, resumed_checkpoint);
  } else {
    torchfit::logger().warn("run folder '{}' holds an earlier run: its steps.csv, epochs.csv and run.json are replaced",
                            run_dir_);
  }
}

}  // namespace torchfit
