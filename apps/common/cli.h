#pragma once
// Shared by the apps: CLI11 parsing with torchfit's exit statuses (0 for --help, 2 for any bad flag or
// value, 1 for a failure while running), the limits every app applies to the same flag, and the CLI11
// validators for values CLI11 cannot check by type. Every flag is checked the same way: by a CLI11
// check attached to the option, so the message always starts with the flag's name.
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <torchfit/data/directory_iterator.h>

#include <climits>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace torchfit::apps {

/// The same limits for the same flag in every app.
namespace limits {
constexpr long long kMaxBatchSize = 1 << 20;          ///< --batch-size: images per batch
constexpr long long kMaxThreads = 4096;               ///< --threads: LibTorch intra-op threads (0 = cores)
constexpr long long kMaxWorkers = data::kMaxWorkers;  ///< --workers: loader threads (0 = cores)
constexpr long long kMinTargetSize = 10;              ///< --target-size, pixels (two conv/pool stages fit)
constexpr long long kMaxTargetSize = 4096;            ///< --target-size, pixels
}  // namespace limits

/// Integer flag in [lo, hi].
inline CLI::Range int_range(long long lo, long long hi = INT_MAX) { return CLI::Range(lo, hi); }

/// A finite number > 0 (CLI11's PositiveNumber accepts inf and prints the whole double range).
CLI::Validator positive_finite();
/// A finite number > 0 written as a decimal or a fraction "a/b" (e.g. --rescale 1/255, as the help shows
/// its default); the option then holds the decimal. "must be a finite number > 0, got X" otherwise.
CLI::Validator positive_fraction();
/// A seed: a whole number in [0, 2^64 − 1] (CLI11 alone wraps "-1" into 18446744073709551615).
CLI::Validator seed_value();
/// A number in (0, 1].
CLI::Validator unit_fraction();
/// A value the library checks: `check` throws torchfit::ConfigError (or UsageError) with the reason, which
/// becomes the flag's message (exit 2); `description` is the value's form in --help (e.g. "epoch|batch|N").
CLI::Validator library_check(std::function<void(const std::string&)> check, const std::string& description);
/// The status of `path`, never throwing: `problem` receives why the path cannot be looked up — a name
/// over 255 bytes or an OS error other than "does not exist" (File name too long, Too many levels of
/// symbolic links, Permission denied), with the path (shortened when long) — or "" when it exists or
/// simply does not exist. Every path check of the apps goes through it (the validators below).
std::filesystem::file_status path_status(const std::string& path, std::string* problem);

/// A folder that exists ("directory 'X' does not exist" / "'X' is not a directory").
CLI::Validator existing_directory();
/// A regular file that exists ("<what> 'X' does not exist" / "is a directory, not a file").
CLI::Validator existing_file(const std::string& what);
/// A model to read: an existing file, or a TensorFlow.js folder holding model.json (keras/keras_file.h
/// is_tfjs_model); a folder without one is refused saying so.
CLI::Validator model_file_or_tfjs_folder();
/// A file to write: not empty, not an existing folder, a path that can be looked up (path_status), and
/// the nearest existing folder on it writable (checked before any work is done).
/// `example_name` (e.g. "model.ckpt") makes the message suggest DIR/example_name for a folder.
CLI::Validator output_file(const std::string& example_name = "");
/// A folder to write into: not empty, not an existing file; lookup and writability as output_file.
CLI::Validator output_directory();
/// cpu | cuda | cuda:N | mps | auto: the spelling only; a device missing at run time is a run error.
CLI::Validator device_spelling();

/// The flags several apps share, each with its one check and its default shown in --help; `help`
/// replaces the description where an app says more. Each returns the option (for needs/excludes).
/// --device cpu | cuda | cuda:N | auto: the spelling checked (device_spelling).
CLI::Option* add_device_flag(CLI::App& app, std::string& value, const std::string& help = "cpu | cuda | cuda:N | auto");
/// --threads N: LibTorch intra-op threads, 0..limits::kMaxThreads (0 = CPU cores).
CLI::Option* add_threads_flag(CLI::App& app, int& value,
                              const std::string& help = "LibTorch intra-op threads (0 = CPU cores)");
/// --workers N: data loader threads, 0..limits::kMaxWorkers (0 = CPU cores).
CLI::Option* add_workers_flag(CLI::App& app, int& value,
                              const std::string& help = "Data loader threads (0 = CPU cores)");
/// --batch-size N: 1..limits::kMaxBatchSize.
CLI::Option* add_batch_size_flag(CLI::App& app, int64_t& value, const std::string& help = "Images per batch");
/// --target-size N: limits::kMinTargetSize..limits::kMaxTargetSize pixels (square).
CLI::Option* add_target_size_flag(CLI::App& app, int64_t& value,
                                  const std::string& help = "Images are resized to SIZE x SIZE pixels");
/// --memory-format auto | channels_last | contiguous (ModelImpl::set_memory_format).
CLI::Option* add_memory_format_flag(CLI::App& app, std::string& value);
/// --mixed-precision float32 | mixed_bfloat16 | mixed_float16 (the Keras dtype policies).
CLI::Option* add_mixed_precision_flag(CLI::App& app, std::string& value, const std::string& help);

/// Every option of `app` as parsed, for run.json's "arguments": key = the long name with '_' for '-'
/// ("batch_size"); value = what was given, else the default; integers and numbers (CLI11 types INT,
/// UINT, FLOAT) as JSON numbers, flags as true/false, an option given several times as a list, one
/// neither given nor with a default as null. --help is left out.
nlohmann::json parsed_arguments(const CLI::App& app);

/// --max-image-pixels N (FlowOptions::max_image_pixels, Pillow's Image.MAX_IMAGE_PIXELS): files of
/// more than N pixels load with a warning, files of more than 2·N are skipped; 0 = no limit.
/// Default data::kMaxImagePixels (89478485, Pillow's default).
void add_max_image_pixels_flag(CLI::App& app, int64_t& value);

/// --sixteen-bit high_byte|pillow (FlowOptions::sixteen_bit): how 16-bit images become 8-bit.
/// Default high_byte.
void add_sixteen_bit_flag(CLI::App& app, std::string& value);

/// A flag and the path it names, e.g. {"--model", "run/model.ckpt"}.
using FlagPath = std::pair<std::string, std::string>;
/// Refuses an output that would replace the user's inputs: `output` (named by its flag) must not be one of
/// `input_files`, nor an existing file inside one of `input_dirs` (compared after resolving "..", symlinks
/// and relative paths; a new file there is fine unless `new_files_too`, e.g. a checkpoint that would land
/// among the training images). Errors: UsageError, e.g. "--output 'run/model.ckpt' is the --model file:
/// it would be overwritten".
void check_output_is_not_input(const FlagPath& output, const std::vector<FlagPath>& input_files,
                               const std::vector<FlagPath>& input_dirs, bool new_files_too = false);

/// Refuses a folder output that replaces the folder whole (a TF.js model: `train_cnn --save-keras DIR/`) when it
/// is, or holds, one of `kept` (the run folder, the data): compared after resolving "..", symlinks and relative
/// paths. Errors: UsageError, e.g. "--save-keras 'run/' would replace --run-dir 'run' (the folder is written
/// whole)".
void check_folder_replaces_none(const FlagPath& folder, const std::vector<FlagPath>& kept);

/// A bad flag value found after parsing (exit status 2), e.g. one that needs the data to check.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The comma-separated items of a flag's `text`, spaces around each trimmed (commas inside {…}, […] and quoted
/// strings do not separate: `accuracy,{"class_name": "AUC", "config": {"curve": "PR"}}` is two items); `strict`: an
/// empty item is a UsageError naming `flag` ("--metrics: an empty item in 'a,,b'"; no flag: "an empty item in 'a,,b'"),
/// otherwise empty items are dropped.
std::vector<std::string> comma_items(const std::string& text, const std::string& flag = "", bool strict = false);

/// A flag's comma-separated numbers: int64_t — whole numbers >= 1, strictly increasing (step counts such
/// as --lr-boundaries); double — finite numbers. "" gives none. Errors: UsageError naming `flag` and the
/// item (not a number, out of range, below 1, not increasing, an empty item).
template <typename T>
std::vector<T> number_list(const std::string& flag, const std::string& text);

/// --gpu-memory-fraction F: runtime::set_gpu_memory_fraction(F, device), its errors (same types) naming the
/// flag instead of the function.
void set_gpu_memory_fraction_flag(double fraction, const c10::Device& device);

/// Runs `body`, turning errors into a message and an exit status: UsageError → "<app>: <msg>" and 2;
/// c10::Error (LibTorch's message without its C++ stack) and other exceptions → an error log line and 1.
/// Installs runtime::install_exit_cleanup() first, so that no temporary file outlives the app.
int run_reporting_errors(const std::string& app, const std::function<int()>& body);

}  // namespace torchfit::apps

#define TORCHFIT_CLI_PARSE(app, argc, argv) \
  try {                                     \
    (app).parse((argc), (argv));            \
  } catch (const CLI::ParseError& e) {      \
    return (app).exit(e) == 0 ? 0 : 2;      \
  }
