#pragma once
// Keras's summary formatting (keras/utils/layer_utils.py print_summary), shared by the Sequential and
// functional layouts.
#include <cstdint>
#include <string>
#include <vector>

namespace torchfit::summary_text {

/// 42520714 → "42,520,714".
inline std::string thousands(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

/// Keras print_row: each field is cut to fit its column and padded with spaces to the next position.
inline std::string row(const std::vector<std::string>& fields, const std::vector<int>& positions) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line = line.substr(0, line.size() - 1) + " ";  // Keras: line[:-1] + ' '
    line += fields[i];
    line = line.substr(0, static_cast<size_t>(positions[i]));
    line += std::string(static_cast<size_t>(positions[i]) - line.size(), ' ');
  }
  return line;  // padded to line_length with spaces, exactly as Keras prints it
}

}  // namespace torchfit::summary_text
