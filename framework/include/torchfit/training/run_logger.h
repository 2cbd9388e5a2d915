#pragma once
/// @file run_logger.h
/// RunLogger — the run files of a training run: steps.csv, epochs.csv and run.json.
#include <memory>
#include <string>
#include <vector>

#include <torch/arg.h>
#include <nlohmann/json.hpp>

#include <torchfit/io/csv.h>
#include <torchfit/runtime/cleanup.h>
#include <torchfit/training/callback.h>

namespace torchfit {

/// Options of RunLogger.
struct RunLoggerOptions {
  /// Folder for the three files (created, and probed for writing, at the start of fit()).
  explicit RunLoggerOptions(std::string run_dir) : run_dir_(std::move(run_dir)) {}
  TORCH_ARG(std::string, run_dir);
  /// Stored as run.json's "arguments" (e.g. an app's flags).
  TORCH_ARG(nlohmann::json, run_info) = nlohmann::json::object();
  /// Continue the run files already in run_dir (Keras CSVLogger(append=True), BackupAndRestore) when
  /// fit() resumes (FitParams::initial_epoch/initial_step > 0): see RunLogger. Default false: replace them.
  TORCH_ARG(bool, append) = false;
  /// Other folders this run writes into (e.g. the checkpoint's folder), locked as run_dir is, so that
  /// no run writes into another live run's folder. Default none.
  TORCH_ARG(std::vector<std::string>, also_lock) = {};

 public:
  /// The run-folder policy. A new run's folder: `<root>/<YYYYmmdd-HHMMSS>-<tag>` (local time; tag e.g. the
  /// device type, "cpu" or "cuda"), created now and exclusively when `create` (a run started in the same
  /// second gets "-2", "-3", …, so two runs never share one); only the name when not (a process that writes
  /// no run files, e.g. a data-parallel worker). Errors: IoError naming the folder when it cannot be created.
  static std::string automatic_run_dir(const std::string& tag, bool create = true, const std::string& root = "runs");
  /// A run resumed from `checkpoint` continues the run files in run_dir (sets append) when run_dir holds
  /// the run that wrote it: the checkpoint lies in run_dir, or run_dir/run.json's "arguments"."checkpoint"
  /// names it (paths compared after resolving . and ..). Otherwise append stays as it is. "" ⇒ no change.
  /// Returns whether it continues them.
  bool continue_run_of(const std::string& checkpoint);
  /// Before a run replaces any file: refuses a run_dir or also_lock folder that another live run holds
  /// (RunLogger::check_not_in_use), continues the run files of the run `resumed_checkpoint` comes from
  /// (continue_run_of; "" ⇒ a new run) and says what becomes of run files already in run_dir: continued
  /// (info) or replaced (a warning). Call it in the process that writes the run files (rank 0).
  /// Errors: IoError naming a folder in use and the process holding it.
  void prepare(const std::string& resumed_checkpoint = "");
};

/// Writes, in run_dir (files replaced at the start of fit(), rows flushed as they come):
/// - steps.csv: `epoch,step,data_ms,h2d_ms,compute_ms,step_ms,loss,<metrics…>`, one row per step
///   (epoch and step 1-based; times in ms, see StepTiming; loss and metrics of that batch).
/// - epochs.csv: `epoch,loss,<metrics…>,val_loss,<val_metrics…>,seconds,ms_per_step_median,
///   ms_per_step_p90,images_per_s,data_wait_share`, one row per epoch (epoch 1-based; loss and metrics
///   the epoch's means; val_ columns empty without validation; seconds = the whole epoch including
///   validation; step statistics over the epoch's non-warm-up steps, summarize_timings()).
/// - run.json: environment, model (config, parameters, FLOPs), compile settings, run parameters,
///   `arguments`, and "status": "running" while training, then "completed", "stopped early",
///   "interrupted" or "failed" (with "error"); at the end also warm-up steps, per-epoch summaries,
///   final metrics and the position reached. Written atomically each time.
/// A resumed fit() with `append` continues the files of the run it resumes: the rows of steps.csv and
/// epochs.csv up to the resume position are kept (rows past it, written after the checkpoint, are dropped
/// and written again), run.json keeps the earlier epoch summaries and records each part of the run in
/// "parts" (started, initial epoch and step, status, signal, position reached). Files of another layout
/// (other metrics) are replaced with a warning. Without `append`, or when not resuming, the files start
/// fresh.
/// run_dir is locked (flock on run_dir/.torchfit.lock) from on_train_begin to the end of the run (the
/// lock file is removed when the RunLogger goes, and on exit(), std::terminate or a fatal signal: see
/// runtime/cleanup.h; only SIGKILL leaves it, and a later run on the folder takes it over): a
/// second RunLogger — in this or another process — on the same folder fails with an IoError naming the
/// folder and the process holding it, so that a run never writes into another live run's files; the
/// folders of `also_lock` are locked the same way. `RunLogger::check_not_in_use(dir)` asks the same
/// question up front (before a run replaces any file) without holding the lock.
/// The CSV files are written through io::CsvWriter (libcsv, RFC 4180 quoting; LF line ends), one
/// flushed row at a time. Errors: IoError naming the file when run_dir cannot be written (at
/// on_train_begin, before any step) or a row cannot be written, with the OS reason (e.g. "cannot write
/// 'runs/x/steps.csv': No space left on device"); fit() then stops and run.json says "failed".
class RunLogger : public Callback {
 public:
  explicit RunLogger(RunLoggerOptions options);
  ~RunLogger() override;
  void on_train_begin(const Logs& logs) override;
  bool chief_only() const override { return true; }  ///< rank 0 only in data-parallel runs
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  void on_train_error(const std::string& message) override;

  /// Merges `fields` into run.json and rewrites it (e.g. figures an app measures after fit()).
  void update(const nlohmann::json& fields);
  const std::string& run_dir() const { return options_.run_dir(); }

 private:
  void open_csv_files();
  void lock_run_dir();
  void unlock_run_dir();

 public:
  /// Throws the IoError a RunLogger on `dir` would give if another live process holds it; no-op when
  /// `dir` does not exist or is free (the lock is not kept).
  static void check_not_in_use(const std::string& dir);

 private:
  bool continue_earlier_files(const std::vector<std::string>& steps_header,
                              const std::vector<std::string>& epochs_header);
  void begin_part();
  void write_run_json();
  nlohmann::json run_description() const;
  nlohmann::json epoch_summary(int epoch, const Logs& logs, double seconds) const;
  RunLoggerOptions options_;
  io::CsvWriter steps_csv_, epochs_csv_;
  nlohmann::json run_json_ = nlohmann::json::object();
  nlohmann::json epoch_summaries_ = nlohmann::json::array();
  nlohmann::json earlier_ = nlohmann::json::object();  // run.json of the run this one continues (append)
  struct FolderLock {
    int fd;                                           // holds the flock
    std::string path;                                 // <folder>/.torchfit.lock, removed at unlock
    std::unique_ptr<runtime::TemporaryFile> on_exit;  // and on the exits that skip the destructor
  };
  std::vector<FolderLock> locks_;
  int epoch_ = 0;
  double epoch_start_ms_ = 0, last_batch_end_ms_ = 0;
};

}  // namespace torchfit
