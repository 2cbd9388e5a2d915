#include "matmul_csv.h"

#include <cstdio>

#include <torchfit/io/csv.h>

namespace matmul_bench {

std::string matmul_csv(const std::vector<torchfit::runtime::MatmulRow>& rows) {
  using torchfit::io::csv_line;
  const auto fmt = [](const char* f, double v) {
    char cell[64];
    std::snprintf(cell, sizeof(cell), f, v);
    return std::string(cell);
  };
  std::string out = csv_line({"n", "method", "device", "threads", "repeats", "ms", "gflops", "speedup_vs_naive",
                              "share_of_best", "max_rel_error", "valid"});
  for (const auto& r : rows) {
    out += csv_line({std::to_string(r.n), r.method, r.device, std::to_string(r.threads), std::to_string(r.repeats),
                     fmt("%.6f", r.ms), fmt("%.4f", r.gflops), fmt("%.4f", r.speedup_vs_naive),
                     fmt("%.6f", r.share_of_best), fmt("%.3e", r.max_rel_error), r.valid ? "1" : "0"});
  }
  return out;
}

}  // namespace matmul_bench
