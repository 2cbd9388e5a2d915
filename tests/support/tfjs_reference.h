#pragma once
// TensorFlow.js (npm @tensorflow/tfjs under node) as an independent reference: its prediction of a TF.js
// export (keras::save_tfjs_model), by tests/keras/reference/tfjs_predict.js.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "support/keras_reference.h"
#include "support/temp_dir.h"

namespace torchfit::testing {

// TensorFlow.js's prediction of the TF.js export in `dir` for `x` (N, C, H, W or a sequence); "" in
// `skip` when it ran, else why not (node or @tensorflow/tfjs missing).
inline at::Tensor tfjs_prediction(const std::string& dir, const at::Tensor& x, std::string& skip) {
  TempDir work("tfjs_req");
  const at::Tensor keras_x = x.dim() == 4 ? x.permute({0, 2, 3, 1}).contiguous() : x;
  std::ofstream(work.file("req.json"))
      << nlohmann::json{{"inputs", nlohmann::json::array({tensor_json(keras_x)})}}.dump();
  const std::string script = std::string(TORCHFIT_SOURCE_DIR) + "/tests/keras/reference/tfjs_predict.js";
  const std::string cmd = "node '" + script + "' '" + dir + "' '" + work.file("req.json") + "' '" +
                          work.file("out.json") + "' >'" + work.file("log") + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream log;
  log << std::ifstream(work.file("log")).rdbuf();
  if (std::system("command -v node >/dev/null 2>&1") != 0) skip = "node (Debian nodejs) is not installed";
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) skip = log.str();
  if (!skip.empty()) return {};
  EXPECT_EQ(rc, 0) << cmd << "\n" << log.str();
  if (rc != 0) return {};
  nlohmann::json out;
  std::ifstream(work.file("out.json")) >> out;
  at::Tensor y = detail::reference_tensor(out.at("outputs").at(0));
  return y.dim() == 4 ? y.permute({0, 3, 1, 2}).contiguous() : y;
}

}  // namespace torchfit::testing
