#pragma once
// What onnx_classify needs from an ONNX file besides the network OpenCV reads: the first graph input's
// name and dimensions, and the "class_names" metadata torchfit writes (a JSON list of strings).
#include <cstdint>
#include <string>
#include <vector>

struct OnnxInfo {
  std::string input_name;
  std::vector<int64_t> input_dims;  // -1 for a named (dynamic) dimension, e.g. the batch "N"
  std::vector<std::string> class_names;
};

/// Reads `bytes` (an ONNX ModelProto) with a minimal protobuf reader. Throws std::runtime_error for a
/// malformed file.
OnnxInfo read_onnx_info(const std::string& bytes);
