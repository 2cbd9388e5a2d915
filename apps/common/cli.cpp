#include "cli.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <type_traits>

#include <c10/util/Exception.h>
#include <torchfit/runtime/logging.h>

#include <torchfit/keras/keras_file.h>
#include <torchfit/runtime/cleanup.h>
#include <torchfit/runtime/device.h>

namespace torchfit::apps {
namespace fs = std::filesystem;
namespace {

// A validator of a number: `check(v)` returns "" or what is wrong with it.
CLI::Validator number_check(const std::string& description,
                            const std::function<std::string(double, const std::string&)>& check) {
  return CLI::Validator(
      [check](std::string& s) -> std::string {
        try {
          size_t used = 0;
          const double v = std::stod(s, &used);
          if (used == s.size()) return check(v, s);
        } catch (const std::exception&) {
        }
        return "must be a number, got '" + s + "'";
      },
      description);
}

// 'path' for a message: a path longer than 80 bytes shows its start and end and its length.
std::string shown(const std::string& path) {
  if (path.size() <= 80) return "'" + path + "'";
  return "'" + path.substr(0, 40) + "…" + path.substr(path.size() - 20) + "' (" + std::to_string(path.size()) +
         " bytes)";
}

}  // namespace

fs::file_status path_status(const std::string& path, std::string* problem) {
  problem->clear();
  for (const auto& part : fs::path(path)) {
    if (part.native().size() > 255) {  // NAME_MAX of Linux's file systems: no lookup goes past it
      *problem = shown(path) + ": the name '" + part.native().substr(0, 20) + "…' is " +
                 std::to_string(part.native().size()) + " bytes, longer than 255 (File name too long)";
      return fs::file_status(fs::file_type::none);
    }
  }
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    *problem = shown(path) + ": " + ec.message();  // File name too long, Too many levels of symbolic links, …
  }
  return st;
}

CLI::Validator positive_finite() {
  return number_check("NUMBER > 0", [](double v, const std::string& text) -> std::string {
    return v > 0 && std::isfinite(v) ? "" : "must be a finite number > 0, got " + text;
  });
}

CLI::Validator positive_fraction() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const std::string bad = "must be a finite number > 0 (or a fraction such as 1/255), got " + s;
        const size_t slash = s.find('/');
        std::vector<std::string> parts = {s.substr(0, slash)};
        if (slash != std::string::npos) parts.push_back(s.substr(slash + 1));
        double value = 1.0;
        for (size_t i = 0; i < parts.size(); ++i) {
          char* end = nullptr;
          errno = 0;
          const double v = std::strtod(parts[i].c_str(), &end);
          if (parts[i].empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v) || !(v > 0)) return bad;
          value = i == 0 ? v : value / v;
        }
        if (!(value > 0) || !std::isfinite(value)) return bad;
        std::ostringstream os;
        os.precision(17);
        os << value;
        s = os.str();
        return "";
      },
      "NUMBER > 0");
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
        errno = 0;
        if (digits) std::strtoull(s.c_str(), nullptr, 10);
        if (!digits || errno == ERANGE) return "must be a whole number in [0, 18446744073709551615], got " + s;
        return "";
      },
      "UINT64");
}

CLI::Validator unit_fraction() {
  return number_check("FRACTION in (0, 1]", [](double v, const std::string& text) -> std::string {
    return v > 0 && v <= 1 ? "" : "must be in (0, 1], got " + text;
  });
}

CLI::Validator library_check(std::function<void(const std::string&)> check, const std::string& description) {
  return CLI::Validator(
      [check = std::move(check)](std::string& s) -> std::string {
        try {
          check(s);
          return "";
        } catch (const std::exception& e) {  // ConfigError, or UsageError from comma_items
          return e.what();
        }
      },
      description);
}

CLI::Validator existing_directory() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        std::string problem;
        const fs::file_status st = path_status(s, &problem);
        if (!problem.empty()) return "directory " + problem;
        if (!fs::exists(st)) return "directory " + shown(s) + " does not exist";
        return fs::is_directory(st) ? "" : shown(s) + " is not a directory";
      },
      "DIR");
}

CLI::Validator model_file_or_tfjs_folder() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (keras::is_tfjs_model(s)) return "";
        std::error_code ec;
        if (fs::is_directory(s, ec)) return "model " + shown(s) + " is a folder without a TF.js model.json";
        return existing_file("model")(s);
      },
      "FILE|DIR");
}

CLI::Validator existing_file(const std::string& what) {
  return CLI::Validator(
      [what](std::string& s) -> std::string {
        std::string problem;
        const fs::file_status st = path_status(s, &problem);
        if (!problem.empty()) return what + " " + problem;
        if (fs::is_regular_file(st)) return "";
        if (fs::is_directory(st)) return what + " " + shown(s) + " is a directory, not a file";
        return what + " " + shown(s) + (fs::exists(st) ? " is not a regular file" : " does not exist");
      },
      "FILE");
}

void check_output_is_not_input(const FlagPath& output, const std::vector<FlagPath>& input_files,
                               const std::vector<FlagPath>& input_dirs, bool new_files_too) {
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(fs::absolute(output.second), ec);
  for (const auto& [flag, file] : input_files) {
    if (!file.empty() && out == fs::weakly_canonical(fs::absolute(file), ec)) {
      throw UsageError(output.first + " '" + output.second + "' is the " + flag + " file: it would be overwritten");
    }
  }
  for (const auto& [flag, dir] : input_dirs) {
    if (dir.empty()) continue;
    const fs::path d = fs::weakly_canonical(fs::absolute(dir), ec);
    const auto [d_end, o_end] = std::mismatch(d.begin(), d.end(), out.begin(), out.end());
    const bool inside = d_end == d.end() || (std::next(d_end) == d.end() && d_end->empty());
    if (inside && fs::exists(out, ec)) {
      throw UsageError(output.first + " '" + output.second + "' is a file inside " + flag + " '" + dir +
                       "': it would be overwritten");
    }
    if (inside && new_files_too) {
      throw UsageError(output.first + " '" + output.second + "' is inside " + flag + " '" + dir +
                       "': outputs may not be written among the inputs");
    }
  }
}

void check_folder_replaces_none(const FlagPath& folder, const std::vector<FlagPath>& kept) {
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(fs::absolute(folder.second), ec);
  for (const auto& [flag, path] : kept) {
    if (path.empty()) continue;
    const fs::path k = fs::weakly_canonical(fs::absolute(path), ec);
    const auto [o_end, k_end] = std::mismatch(out.begin(), out.end(), k.begin(), k.end());
    if (o_end == out.end() || (std::next(o_end) == out.end() && o_end->empty())) {
      throw UsageError(folder.first + " '" + folder.second + "' would replace " + flag + " '" + path +
                       "' (the folder is written whole)");
    }
  }
}

// Why `s` cannot be written as an output path, or "": too long, a symlink loop, a folder that cannot be
// searched (EACCES), or a parent that is a file. Checked once the path itself can be looked up.
std::string output_path_problem(const std::string& s, fs::file_status* st) {
  if (s.empty()) return "an empty path";
  if (s.size() >= 4096) return shown(s) + ": longer than PATH_MAX, 4095 bytes (File name too long)";
  std::string problem;
  *st = path_status(s, &problem);
  if (!problem.empty()) return problem;
  // The nearest folder that exists must be a folder this process may create files in.
  fs::path existing = fs::exists(*st) && fs::is_directory(*st) ? fs::path(s) : fs::path(s).parent_path();
  for (; !existing.empty(); existing = existing.parent_path()) {
    const fs::file_status p = path_status(existing.string(), &problem);
    if (!problem.empty()) return problem;
    if (!fs::exists(p)) continue;
    if (!fs::is_directory(p)) return shown(existing.string()) + " is not a directory";
    break;
  }
  if (existing.empty()) existing = ".";
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    return "cannot write in " + shown(existing.string()) + ": " + std::strerror(errno);
  }
  return "";
}

CLI::Validator output_file(const std::string& example_name) {
  return CLI::Validator(
      [example_name](std::string& s) -> std::string {
        fs::file_status st;
        if (std::string problem = output_path_problem(s, &st); !problem.empty()) return problem;
        if (!fs::is_directory(st)) return "";
        const std::string hint = example_name.empty() ? "" : " such as " + (fs::path(s) / example_name).string();
        return shown(s) + " is a directory; give a file path" + hint;
      },
      "FILE");
}

CLI::Validator output_directory() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        fs::file_status st;
        if (std::string problem = output_path_problem(s, &st); !problem.empty()) return problem;
        if (fs::exists(st) && !fs::is_directory(st)) return shown(s) + " exists and is not a directory";
        return "";
      },
      "DIR");
}

CLI::Validator device_spelling() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s == "auto") return "";
        try {
          runtime::parse_device(s);
        } catch (const std::invalid_argument& e) {
          return e.what();
        } catch (const std::exception&) {
          // a valid spelling whose device is missing (cuda on a CPU-only build): a run error, exit 1
        }
        return "";
      },
      "DEVICE");
}

namespace {
// LibTorch appends "Exception raised from … frame #0 …" to its messages, also when another error wraps one.
std::string without_stack(const std::string& message) {
  for (const char* marker : {"\nException raised from", "\nframe #0"}) {
    const auto at = message.find(marker);
    if (at != std::string::npos) return message.substr(0, at);
  }
  return message;
}
}  // namespace

void set_gpu_memory_fraction_flag(double fraction, const c10::Device& device) {
  const std::string function = "set_gpu_memory_fraction: ";
  const auto flagged = [&function](const char* what) {
    const std::string text = what;
    return "--gpu-memory-fraction: " + (text.rfind(function, 0) == 0 ? text.substr(function.size()) : text);
  };
  try {
    runtime::set_gpu_memory_fraction(fraction, device);
  } catch (const std::invalid_argument& e) {
    throw UsageError(flagged(e.what()));
  } catch (const Error& e) {
    throw Error(flagged(e.what()));
  }
}

int run_reporting_errors(const std::string& app, const std::function<int()>& body) {
  runtime::install_exit_cleanup();  // no temporary of an atomic write outlives the app (runtime/cleanup.h)
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << app << ": " << e.what() << "\nRun with --help for more information.\n";
    return 2;
  } catch (const c10::Error& e) {
    torchfit::logger().error("{}", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    torchfit::logger().error("{}", without_stack(e.what()));
    return 1;
  }
}

CLI::Option* add_device_flag(CLI::App& app, std::string& value, const std::string& help) {
  return app.add_option("--device", value, help)->capture_default_str()->check(device_spelling());
}

CLI::Option* add_threads_flag(CLI::App& app, int& value, const std::string& help) {
  return app.add_option("--threads", value, help)->capture_default_str()->check(int_range(0, limits::kMaxThreads));
}

CLI::Option* add_workers_flag(CLI::App& app, int& value, const std::string& help) {
  return app.add_option("--workers", value, help)->capture_default_str()->check(int_range(0, limits::kMaxWorkers));
}

CLI::Option* add_batch_size_flag(CLI::App& app, int64_t& value, const std::string& help) {
  return app.add_option("--batch-size", value, help)->capture_default_str()->check(int_range(1, limits::kMaxBatchSize));
}

CLI::Option* add_target_size_flag(CLI::App& app, int64_t& value, const std::string& help) {
  return app.add_option("--target-size", value, help)
      ->capture_default_str()
      ->check(int_range(limits::kMinTargetSize, limits::kMaxTargetSize));
}

CLI::Option* add_memory_format_flag(CLI::App& app, std::string& value) {
  return app
      .add_option("--memory-format", value,
                  "Activation layout: auto (channels_last on the CPU, contiguous on CUDA), channels_last, "
                  "contiguous")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "channels_last", "contiguous"}));
}

CLI::Option* add_mixed_precision_flag(CLI::App& app, std::string& value, const std::string& help) {
  return app.add_option("--mixed-precision", value, help)
      ->capture_default_str()
      ->check(CLI::IsMember({"float32", "mixed_bfloat16", "mixed_float16"}));
}

namespace {
// One parsed value as JSON: a number for CLI11's numeric types, else the text.
nlohmann::json argument_value(const CLI::Option& option, const std::string& text) {
  const std::string type = option.get_type_name();
  const auto is = [&](const char* t) { return type.rfind(t, 0) == 0; };
  try {
    if (is("INT")) return std::stoll(text);
    if (is("UINT")) return std::stoull(text);
    if (is("FLOAT")) return std::stod(text);
  } catch (const std::exception&) {  // not a number after all: kept as written
  }
  return text;
}
}  // namespace

nlohmann::json parsed_arguments(const CLI::App& app) {
  nlohmann::json out = nlohmann::json::object();
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty() || option == app.get_help_ptr()) continue;
    std::string key = option->get_lnames().front();
    std::replace(key.begin(), key.end(), '-', '_');
    if (option->get_expected_max() == 0) {  // a flag: takes no value
      out[key] = option->count() > 0;
      continue;
    }
    std::vector<std::string> given = option->results();
    if (given.empty() && !option->get_default_str().empty()) given = {option->get_default_str()};
    if (given.empty()) {
      out[key] = nullptr;
    } else if (given.size() == 1) {
      out[key] = argument_value(*option, given.front());
    } else {
      for (const auto& text : given) out[key].push_back(argument_value(*option, text));
    }
  }
  return out;
}

void add_max_image_pixels_flag(CLI::App& app, int64_t& value) {
  app.add_option("--max-image-pixels", value,
                 "Pixel limit as Pillow's MAX_IMAGE_PIXELS: images above N pixels (width x height, read from the "
                 "header) load with a warning, above 2 x N they are skipped (0 = no limit)")
      ->capture_default_str()
      ->check(int_range(0, LLONG_MAX / 2));
}

void add_sixteen_bit_flag(CLI::App& app, std::string& value) {
  app.add_option("--sixteen-bit", value,
                 "16-bit images: high_byte (value >> 8) or pillow (as Keras/Pillow: 16-bit grayscale clipped to "
                 "0..255, colour by high byte)")
      ->capture_default_str()
      ->check(CLI::IsMember({"high_byte", "pillow"}));
}

namespace {
// `text` cut at the commas outside brackets and quoted strings: a JSON item (a Keras metric object) stays whole.
std::vector<std::string> top_level_items(const std::string& text) {
  std::vector<std::string> items(1);
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!quoted && depth == 0 && c == ',') {
      items.emplace_back();
      continue;
    }
    items.back() += c;
    if (quoted && c == '\\' && i + 1 < text.size()) {
      items.back() += text[++i];
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && (c == '{' || c == '[')) {
      ++depth;
    } else if (!quoted && (c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return items;
}
}  // namespace

std::vector<std::string> comma_items(const std::string& text, const std::string& flag, bool strict) {
  std::vector<std::string> out;
  for (std::string item : top_level_items(text)) {
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty() && strict) throw UsageError((flag.empty() ? "" : flag + ": ") + "an empty item in '" + text + "'");
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

template <typename T>
std::vector<T> number_list(const std::string& flag, const std::string& text) {
  std::vector<T> out;
  for (const auto& item : comma_items(text, flag, !text.empty())) {
    size_t used = 0;
    T v{};
    try {
      if constexpr (std::is_integral_v<T>)
        v = std::stoll(item, &used, 10);
      else
        v = std::stod(item, &used);
    } catch (const std::out_of_range&) {
      throw UsageError(flag + ": '" + item + "' is out of range");
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || !std::isfinite(static_cast<double>(v))) {
      throw UsageError(flag + ": '" + item + "' is not a " +
                       (std::is_integral_v<T> ? "whole number" : "finite number"));
    }
    if (std::is_integral_v<T> && v < 1) throw UsageError(flag + ": '" + item + "' is below 1");
    if (std::is_integral_v<T> && !out.empty() && v <= out.back()) {
      throw UsageError(flag + ": " + item + " does not increase (boundaries must be strictly increasing)");
    }
    out.push_back(v);
  }
  return out;
}
template std::vector<int64_t> number_list<int64_t>(const std::string&, const std::string&);
template std::vector<double> number_list<double>(const std::string&, const std::string&);

}  // namespace torchfit::apps
