#include <torchfit/training/run_logger.h>

#include <algorithm>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include <ATen/Parallel.h>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/runtime/env_info.h>
#include <torchfit/runtime/interrupt.h>
#include <torchfit/runtime/logging.h>
#include <torchfit/training/timing.h>
#include <torchfit/training/trainer.h>

#include "steady_clock.h"

namespace torchfit {
namespace {

std::string csv_number(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v + 0.0;  // never "-0" (Keras writes 0.0)
  return os.str();
}

std::string csv_cell(const Logs& logs, const std::string& key) {
  auto it = logs.find(key);
  return it == logs.end() ? std::string() : csv_number(it->second);
}

}  // namespace

RunLogger::RunLogger(RunLoggerOptions options) : options_(std::move(options)) {
  if (options_.run_dir().empty()) throw ConfigError("RunLogger: run_dir is empty");
}

RunLogger::~RunLogger() { unlock_run_dir(); }

namespace {

std::string lock_path(const std::string& dir) { return (std::filesystem::path(dir) / ".torchfit.lock").string(); }

// Whether the open `fd` is still the file `path` names: a lock file is removed by the run that holds it, so
// a process that opened it just before may lock a file that no longer has a name.
bool still_named(int fd, const std::string& path) {
  struct stat open_file {
  }, named{};
  return ::fstat(fd, &open_file) == 0 && ::stat(path.c_str(), &named) == 0 && open_file.st_dev == named.st_dev &&
         open_file.st_ino == named.st_ino;
}

// flock(LOCK_EX | LOCK_NB) on dir/.torchfit.lock (created): the open descriptor, or an IoError naming the
// folder and the process holding it.
int flock_run_folder(const std::string& dir) {
  const std::string path = lock_path(dir);
  for (int attempt = 0;; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw IoError("cannot create '" + path + "': " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      char pid[32] = {};
      const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
      ::close(fd);
      throw IoError("run folder '" + dir + "' is in use by another running process" +
                    (n > 0 ? " (pid " + std::string(pid, static_cast<size_t>(n)) + ")" : std::string()) +
                    ": give this run another folder, or wait for that one to end");
    }
    if (still_named(fd, path)) {
      const std::string own = std::to_string(::getpid());
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, own.data(), own.size(), 0) < 0) {
        // the lock holds without the pid; the pid only makes the message of a second run clearer
      }
      return fd;
    }
    ::close(fd);  // the run that held it removed it meanwhile: lock the new file
    if (attempt == 100) throw IoError("cannot lock '" + path + "': it is removed and created again continually");
  }
}

// Removes the lock file while it is still held (so no other process can hold the name meanwhile), then
// releases it.
void remove_and_unlock(int fd, const std::string& path) {
  if (still_named(fd, path)) ::unlink(path.c_str());
  ::close(fd);
}

}  // namespace

void RunLogger::check_not_in_use(const std::string& dir) {
  std::error_code ec;
  const std::string path = lock_path(dir);
  if (!std::filesystem::exists(path, ec)) return;
  remove_and_unlock(flock_run_folder(dir), path);  // free: a lock file left by a killed run goes too
}

void RunLogger::lock_run_dir() {
  if (!locks_.empty()) return;
  std::vector<std::filesystem::path> done;
  for (const std::string& dir : [&] {
         std::vector<std::string> all = {options_.run_dir()};
         all.insert(all.end(), options_.also_lock().begin(), options_.also_lock().end());
         return all;
       }()) {
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(std::filesystem::absolute(dir.empty() ? "." : dir), ec);
    if (std::find(done.begin(), done.end(), canonical) != done.end()) continue;
    done.push_back(canonical);
    try {
      if (dir != options_.run_dir()) io::ensure_writable_directory(dir.empty() ? "." : dir);
      const std::string folder = dir.empty() ? "." : dir;
      locks_.push_back({flock_run_folder(folder), lock_path(folder), nullptr});
      // removed on every exit that can run code (exit, std::terminate, a fatal signal: runtime/cleanup.h)
      locks_.back().on_exit = std::make_unique<runtime::TemporaryFile>(locks_.back().path);
    } catch (...) {
      unlock_run_dir();
      throw;
    }
  }
}

void RunLogger::unlock_run_dir() {
  for (auto& lock : locks_) {
    lock.on_exit.reset();  // first, so that no exit path removes a lock file another run made meanwhile
    remove_and_unlock(lock.fd, lock.path);
  }
  locks_.clear();
}

namespace {

// Rewrites `path` as `header` plus the rows `keep` accepts (atomically); returns the rows dropped.
size_t keep_rows(const std::string& path, const std::vector<io::CsvRow>& rows,
                 const std::function<bool(int64_t epoch, int64_t step)>& keep) {
  std::string text = io::csv_line(rows.front().cells);
  size_t dropped = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& c = rows[i].cells;
    const int64_t epoch = c.empty() ? 0 : std::atoll(c[0].c_str());
    const int64_t step = c.size() < 2 ? 0 : std::atoll(c[1].c_str());
    if (keep(epoch, step)) {
      text += io::csv_line(c);
    } else {
      ++dropped;
    }
  }
  io::write_text_atomically(path, text);
  return dropped;
}

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
  return buf;
}

}  // namespace

// With append, when resuming: keeps the earlier rows up to the resume position and reads the earlier
// run.json; false when there is nothing to continue (the files then start fresh).
bool RunLogger::continue_earlier_files(const std::vector<std::string>& steps_header,
                                       const std::vector<std::string>& epochs_header) {
  namespace fs = std::filesystem;
  const FitParams& p = params();
  if (!options_.append() || (p.initial_epoch == 0 && p.initial_step == 0)) return false;
  const fs::path dir(options_.run_dir());
  const std::string steps_path = (dir / "steps.csv").string(), epochs_path = (dir / "epochs.csv").string();
  std::error_code ec;
  if (!fs::is_regular_file(steps_path, ec) || !fs::is_regular_file(epochs_path, ec)) return false;
  try {
    const auto steps = io::read_csv(steps_path, ',', "run file");
    const auto epochs = io::read_csv(epochs_path, ',', "run file");
    if (steps.empty() || epochs.empty() || steps[0].cells != steps_header || epochs[0].cells != epochs_header) {
      torchfit::logger().warn("'{}' holds run files of another layout (other metrics): they are replaced",
                              options_.run_dir());
      return false;
    }
    const int64_t e0 = p.initial_epoch + 1;  // 1-based epoch of the resume position
    const size_t dropped =
        keep_rows(steps_path, steps, [&](int64_t e, int64_t s) { return e < e0 || (e == e0 && s <= p.initial_step); }) +
        keep_rows(epochs_path, epochs, [&](int64_t e, int64_t) { return e < e0; });
    if (dropped > 0) {
      torchfit::logger().info("'{}': {} row(s) written after the checkpoint's position are dropped (redone now)",
                              options_.run_dir(), dropped);
    }
    std::ifstream in((dir / "run.json").string());
    earlier_ = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json::object();
    if (!earlier_.is_object()) earlier_ = nlohmann::json::object();
  } catch (const IoError& e) {
    torchfit::logger().warn("cannot continue the run files in '{}' ({}): they are replaced", options_.run_dir(),
                            e.what());
    return false;
  }
  return true;
}

void RunLogger::open_csv_files() {
  namespace fs = std::filesystem;
  const fs::path dir(options_.run_dir());
  const auto& metrics = trainer().metric_names();
  std::vector<std::string> steps = {"epoch", "step", "data_ms", "h2d_ms", "compute_ms", "step_ms", "loss"};
  steps.insert(steps.end(), metrics.begin(), metrics.end());
  if (trainer().world_size() > 1) steps.push_back("allreduce_ms");  // data-parallel runs only
  std::vector<std::string> epochs = {"epoch", "loss"};
  epochs.insert(epochs.end(), metrics.begin(), metrics.end());
  epochs.push_back("val_loss");
  for (const auto& m : metrics) epochs.push_back("val_" + m);
  for (const char* k : {"seconds", "ms_per_step_median", "ms_per_step_p90", "images_per_s", "data_wait_share"})
    epochs.push_back(k);
  earlier_ = nlohmann::json::object();
  const bool append = continue_earlier_files(steps, epochs);
  steps_csv_.open((dir / "steps.csv").string(), append);
  epochs_csv_.open((dir / "epochs.csv").string(), append);
  if (append) return;
  steps_csv_.write_row(steps);
  epochs_csv_.write_row(epochs);
}

// run.json's "parts": the earlier parts of a continued run (its first part is the run.json of a run written
// before parts existed) and this one. Epoch summaries of the earlier parts up to the resume position stay.
void RunLogger::begin_part() {
  const FitParams& p = params();
  nlohmann::json parts = earlier_.value("parts", nlohmann::json::array());
  if (!earlier_.empty() && parts.empty()) {
    parts.push_back({{"part", 1},
                     {"status", earlier_.value("status", "unknown")},
                     {"position", earlier_.value("position", nlohmann::json())}});
  }
  parts.push_back({{"part", parts.size() + 1},
                   {"started", now_iso8601()},
                   {"initial_epoch", p.initial_epoch},
                   {"initial_step", p.initial_step},
                   {"resume_from", options_.run_info().value("resume", nlohmann::json())},
                   {"status", "running"}});
  run_json_["parts"] = parts;
  epoch_summaries_ = nlohmann::json::array();
  for (const auto& s : earlier_.value("epoch_summaries", nlohmann::json::array())) {
    if (s.is_object() && s.value("epoch", 0) <= p.initial_epoch) epoch_summaries_.push_back(s);
  }
  run_json_["epoch_summaries"] = epoch_summaries_;
}

namespace {

// The dtype policy and, with loss scaling, its current state (scale, good and skipped steps).
nlohmann::json mixed_precision_info(Trainer& t) {
  const auto& policy = t.model()->dtype_policy();
  const auto* scaler = t.loss_scale_optimizer();
  return {{"policy", policy.name()},
          {"compute_dtype", mixed_precision::dtype_name(policy.compute_dtype())},
          {"variable_dtype", mixed_precision::dtype_name(policy.variable_dtype())},
          {"loss_scale", scaler ? scaler->state() : nlohmann::json()},
          {"loss_scale_settings",
           scaler ? nlohmann::json({{"dynamic", scaler->options().dynamic()},
                                    {"initial_scale", scaler->options().initial_scale()},
                                    {"dynamic_growth_steps", scaler->options().dynamic_growth_steps()}})
                  : nlohmann::json()}};
}

}  // namespace

nlohmann::json RunLogger::run_description() const {
  auto& t = trainer();
  auto& model = t.model();
  const int threads = at::get_num_threads();
  const int64_t train_flops = model->train_flops_per_sample();
  const FitParams& p = params();
  return {{"environment", runtime::environment_info(t.device(), threads)},
          {"device", t.device().str()},
          {"threads", threads},
          {"parameters", model->count_params()},
          {"flops_per_sample_forward", model->flops_per_sample()},
          {"flops_per_sample_train", train_flops},
          {"flops_per_step", train_flops * p.batch_size},
          {"model", model->to_json()},
          {"memory_format",
           {{"requested", model->memory_format()},
            {"used", model->uses_channels_last(t.device()) ? "channels_last" : "contiguous"}}},
          {"pool_before_relu", model->pool_before_relu()},
          {"mixed_precision", mixed_precision_info(t)},
          {"arguments", options_.run_info()},
          {"compile",
           {{"loss", t.compile_options().loss()},
            {"optimizer", t.compile_options().optimizer().name()},
            {"learning_rate", t.learning_rate()},
            {"optimizer_config", t.optimizer_features().state()["config"]},
            {"class_weight", t.class_weight().empty() ? nlohmann::json() : nlohmann::json(t.class_weight())},
            {"metrics", t.metric_names()}}},
          {"epochs", p.epochs},
          {"steps_per_epoch", p.steps},
          {"batch_size", p.batch_size},
          {"warmup_steps", p.warmup_steps},
          {"distributed", t.distributed_info()},
          {"status", "running"}};
}

void RunLogger::write_run_json() {
  io::write_text_atomically((std::filesystem::path(options_.run_dir()) / "run.json").string(), run_json_.dump(2));
}

void RunLogger::update(const nlohmann::json& fields) {
  run_json_.update(fields);
  write_run_json();
}

void RunLogger::on_train_begin(const Logs&) {
  io::ensure_writable_directory(options_.run_dir());
  lock_run_dir();
  open_csv_files();
  run_json_ = run_description();
  begin_part();
  write_run_json();
}

void RunLogger::on_epoch_begin(int epoch, const Logs&) {
  epoch_ = epoch;
  epoch_start_ms_ = last_batch_end_ms_ = detail::steady_ms();
}

void RunLogger::on_train_batch_end(int64_t batch, const Logs& logs) {
  last_batch_end_ms_ = detail::steady_ms();
  std::vector<std::string> row = {std::to_string(epoch_ + 1), std::to_string(batch + 1)};
  for (const char* k : {"data_ms", "h2d_ms", "compute_ms", "step_ms", "batch_loss"}) row.push_back(csv_cell(logs, k));
  for (const auto& m : trainer().metric_names()) row.push_back(csv_cell(logs, "batch_" + m));
  if (trainer().world_size() > 1) row.push_back(csv_cell(logs, "allreduce_ms"));
  steps_csv_.write_row(row);
}

nlohmann::json RunLogger::epoch_summary(int epoch, const Logs& logs, double seconds) const {
  const TimingSummary s = summarize_timings(trainer().step_timings(), epoch + 1);
  const double flops_per_sample = static_cast<double>(trainer().model()->train_flops_per_sample());
  nlohmann::json summary = {{"epoch", epoch + 1},
                            {"seconds", seconds},
                            {"train_seconds", (last_batch_end_ms_ - epoch_start_ms_) / 1000.0},
                            {"ms_per_step_median", s.median_ms},
                            {"ms_per_step_p90", s.p90_ms},
                            {"images_per_s", s.images_per_s},
                            {"data_wait_share", s.data_wait_share},
                            {"gflops_per_s", achieved_gflops_per_s(s, flops_per_sample)}};
  if (trainer().world_size() > 1) {
    summary["allreduce_ms_median"] = s.allreduce_ms_median;
    summary["allreduce_wait_share"] = s.allreduce_wait_share;
  }
  for (const auto& [k, v] : logs) summary[k] = v;
  return summary;
}

void RunLogger::on_epoch_end(int epoch, const Logs& logs) {
  const nlohmann::json s = epoch_summary(epoch, logs, (detail::steady_ms() - epoch_start_ms_) / 1000.0);
  std::vector<std::string> row = {std::to_string(epoch + 1), csv_cell(logs, "loss")};
  for (const auto& m : trainer().metric_names()) row.push_back(csv_cell(logs, m));
  row.push_back(csv_cell(logs, "val_loss"));
  for (const auto& m : trainer().metric_names()) row.push_back(csv_cell(logs, "val_" + m));
  for (const char* k : {"seconds", "ms_per_step_median", "ms_per_step_p90", "images_per_s", "data_wait_share"}) {
    row.push_back(csv_number(s.at(k).get<double>()));
  }
  epochs_csv_.write_row(row);
  epoch_summaries_.push_back(s);
}

void RunLogger::on_train_end(const Logs& logs) {
  auto& t = trainer();
  nlohmann::json warm = nlohmann::json::array();
  for (const auto& s : t.step_timings()) {
    if (!s.warmup) continue;
    warm.push_back({{"epoch", s.epoch},
                    {"step", s.step},
                    {"data_ms", s.data_ms},
                    {"h2d_ms", s.h2d_ms},
                    {"compute_ms", s.compute_ms},
                    {"step_ms", s.step_ms}});
  }
  const auto& pos = t.position();
  run_json_["warmup"] = warm;
  run_json_["epoch_summaries"] = epoch_summaries_;
  run_json_["final_metrics"] = logs;
  run_json_["mixed_precision"] = mixed_precision_info(t);  // the loss scale reached
  run_json_["optimizer_state"] = {{"iterations", t.optimizer_features().iterations()},
                                  {"accumulated", t.optimizer_features().accumulated()},
                                  {"ema_in_weights", t.optimizer_features().averages().size() > 0 && !t.interrupted()}};
  run_json_["status"] = t.interrupted() ? "interrupted" : t.stop_training ? "stopped early" : "completed";
  if (t.interrupted()) run_json_["signal"] = runtime::signal_name(t.interrupt_signal() ? t.interrupt_signal() : SIGINT);
  run_json_["position"] = {
      {"epoch", pos.epoch}, {"step", pos.step}, {"train_batches", pos.train_batches}, {"val_batches", pos.val_batches}};
  auto& part = run_json_["parts"].back();
  part["ended"] = now_iso8601();
  part["status"] = run_json_["status"];
  part["position"] = run_json_["position"];
  if (run_json_.contains("signal")) part["signal"] = run_json_["signal"];
  write_run_json();
  steps_csv_.close();
  epochs_csv_.close();
}

void RunLogger::on_train_error(const std::string& message) {
  if (run_json_.empty()) return;  // failed before the run files existed
  run_json_["status"] = "failed";
  run_json_["error"] = message;
  if (run_json_.contains("parts") && !run_json_["parts"].empty()) {
    run_json_["parts"].back()["status"] = "failed";
    run_json_["parts"].back()["ended"] = now_iso8601();
  }
  write_run_json();
}

}  // namespace torchfit
