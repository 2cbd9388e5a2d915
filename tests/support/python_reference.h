#pragma once
// Independent references computed at test time by Debian's Python (/usr/bin/python3 with numpy,
// scikit-learn, PyTorch): the test hands its inputs as JSON, the script prints its results as JSON.
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "support/temp_dir.h"

namespace torchfit::testing {

/// The result of run_python: `out` when the script ran, else `skip` says why (python or a module missing)
/// and `error` what failed.
struct PythonResult {
  nlohmann::json out;
  std::string skip, error;
};

/// Runs `code` with /usr/bin/python3 after importing `modules` (a missing one ⇒ skip). The script finds
/// its input as `data` (the JSON `input`) and must assign its answer to `out` (JSON-serialisable).
inline PythonResult run_python(const std::vector<std::string>& modules, const std::string& code,
                               const nlohmann::json& input) {
  PythonResult r;
  if (std::system("test -x /usr/bin/python3") != 0) {
    r.skip = "/usr/bin/python3 not found";
    return r;
  }
  TempDir dir("python_ref");
  std::ofstream(dir.file("in.json")) << input.dump();
  std::string prologue = "import sys, json\ntry:\n";
  for (const auto& m : modules) prologue += "    import " + m + "\n";
  prologue += "except ImportError as e:\n    print(e); sys.exit(77)\n";
  prologue += "data = json.load(open(sys.argv[1]))\n";
  std::ofstream(dir.file("ref.py")) << prologue << code << "\njson.dump(out, open(sys.argv[2], 'w'))\n";
  const std::string cmd = "/usr/bin/python3 " + dir.file("ref.py") + " " + dir.file("in.json") + " " +
                          dir.file("out.json") + " >" + dir.file("log.txt") + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream log;
  log << std::ifstream(dir.file("log.txt")).rdbuf();
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
    r.skip = "python module missing: " + log.str();
  } else if (rc != 0) {
    r.error = "reference script failed: " + log.str();
  } else {
    r.out = nlohmann::json::parse(std::ifstream(dir.file("out.json")));
  }
  return r;
}

/// A tensor as nested JSON lists (float64 values).
inline nlohmann::json to_json(const at::Tensor& t) {
  const at::Tensor c = t.detach().cpu().to(at::kDouble).contiguous();
  if (c.dim() == 0) return c.item<double>();
  nlohmann::json j = nlohmann::json::array();
  for (int64_t i = 0; i < c.size(0); ++i) j.push_back(to_json(c[i]));
  return j;
}

}  // namespace torchfit::testing

/// Skips the test when the reference cannot run; fails it when the script fails.
#define TORCHFIT_REQUIRE_PYTHON(result)                        \
  do {                                                         \
    if (!(result).skip.empty()) GTEST_SKIP() << (result).skip; \
    ASSERT_TRUE((result).error.empty()) << (result).error;     \
  } while (0)
