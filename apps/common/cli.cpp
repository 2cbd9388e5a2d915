#include "cli.h"

#include <cmath>
#include <filesystem>
#include <iostream>

#include <c10/util/Exception.h>
#include <spdlog/spdlog.h>

#include <torchfit/runtime/device.h>

namespace torchfit::apps {
namespace fs = std::filesystem;

CLI::Validator positive_finite() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        try {
          v = std::stod(s);
        } catch (const std::exception&) {
          return "must be a number, got '" + s + "'";
        }
        return v > 0 && std::isfinite(v) ? "" : "must be a finite number > 0, got " + s;
      },
      "NUMBER > 0");
}

CLI::Validator unit_fraction() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        try {
          v = std::stod(s);
        } catch (const std::exception&) {
          return "must be a number, got '" + s + "'";
        }
        return v > 0 && v <= 1 ? "" : "must be in (0, 1], got " + s;
      },
      "FRACTION in (0, 1]");
}

CLI::Validator existing_directory() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (!fs::exists(s)) return "directory '" + s + "' does not exist";
        return fs::is_directory(s) ? "" : "'" + s + "' is not a directory";
      },
      "DIR");
}

CLI::Validator existing_file(const std::string& what) {
  return CLI::Validator(
      [what](std::string& s) -> std::string {
        return fs::is_regular_file(s) ? "" : what + " '" + s + "' does not exist";
      },
      "FILE");
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

int run_reporting_errors(const std::string& app, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << app << ": " << e.what() << "\nRun with --help for more information.\n";
    return 2;
  } catch (const c10::Error& e) {
    spdlog::error("{}", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}

}  // namespace torchfit::apps
