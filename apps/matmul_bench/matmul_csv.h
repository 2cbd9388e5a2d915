#pragma once
// matmul_bench --csv: the benchmark rows as CSV.
#include <string>
#include <vector>

#include <torchfit/runtime/matmul.h>

namespace matmul_bench {

/// CSV with header `n,method,device,threads,repeats,ms,gflops,speedup_vs_naive,share_of_best,max_rel_error,valid`
/// (rows formatted by io::csv_line: RFC 4180 quoting through libcsv, LF line ends).
std::string matmul_csv(const std::vector<torchfit::runtime::MatmulRow>& rows);

}  // namespace matmul_bench
