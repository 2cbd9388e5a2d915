// matmul_bench: the articles' matrix-multiply experiment, measured correctly.
//   matmul_bench [--sizes 500] [--naive-max 1024] [--threads 0] [--cuda auto|on|off]
//                [--min-time 0.3] [--seed 0] [--csv FILE]
// Methods: naive i-j-k loop (1 thread), LibTorch at::mm on the CPU (threads = cores by default),
// LibTorch at::mm on cuda:0 when available (warm-up excluded, synchronised before every clock
// read) plus the unsynchronised figure the article reported. Prints the environment header, a
// table (median ms, GFLOP/s, speedup over the naive loop, share of the best rate measured on this
// machine per device kind, max relative error vs a float64 product) and writes --csv.
#include <CLI/CLI.hpp>

#include <torchfit/runtime/logging.h>
#include "../common/cli.h"

#include <iostream>

#include "torchfit/io/atomic_file.h"
#include "torchfit/runtime/device.h"
#include "torchfit/runtime/env_info.h"
#include "torchfit/runtime/matmul.h"
#include "torchfit/runtime/process.h"

#include "matmul_csv.h"

namespace {

struct Args {
  torchfit::runtime::MatmulBenchOptions opt;
  int threads = 0;
  std::string cuda_mode = "auto";
  std::string csv_path;
};

void add_flags(CLI::App& app, Args& a) {
  using torchfit::apps::int_range;
  app.add_option("--sizes", a.opt.sizes, "matrix sizes n (n x n), e.g. --sizes 128 256 500 1024 2048 4096")
      ->capture_default_str()
      ->check(int_range(1));
  app.add_option("--naive-max", a.opt.naive_max, "run the naive O(n^3) loop only for n <= this (0 = never)")
      ->capture_default_str()
      ->check(int_range(0));
  torchfit::apps::add_threads_flag(app, a.threads, "LibTorch CPU threads (0 = all cores)");
  app.add_option("--cuda", a.cuda_mode, "auto: time CUDA when available; on: require it; off: skip")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_option("--min-time", a.opt.min_time_s, "seconds to spend per method and size (median of the runs)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 3600.0));
  app.add_option("--max-repeats", a.opt.max_repeats, "at most this many timed runs per method and size")
      ->capture_default_str()
      ->check(int_range(1));
  app.add_option("--warmup", a.opt.cuda_warmup, "untimed CUDA products before timing")
      ->capture_default_str()
      ->check(int_range(0));
  app.add_option("--seed", a.opt.seed, "seed of the U[0,1) inputs")
      ->capture_default_str()
      ->check(torchfit::apps::seed_value());
  app.add_option("--csv", a.csv_path, "also write the rows as CSV to this file")->check(torchfit::apps::output_file());
}

// --cuda on needs a usable CUDA device: the reason it cannot be used is a run error (exit 1).
bool use_cuda(const std::string& mode) {
  if (mode == "off") return false;
  if (mode == "auto") return torchfit::runtime::parse_device("auto").is_cuda();
  try {
    torchfit::runtime::parse_device("cuda");  // throws with the reason when CUDA cannot be used
  } catch (const std::exception& e) {
    std::string why = e.what();
    const auto hint = why.find(". Use --device");
    if (hint != std::string::npos) why = why.substr(0, hint);
    throw std::runtime_error("--cuda on: " + why + ". Use --cuda off (or auto)");
  }
  return true;
}

void print_intro(const Args& a, int used) {
  const auto device = a.opt.run_cuda ? c10::Device(c10::DeviceType::CUDA, 0) : c10::Device(c10::DeviceType::CPU);
  std::cout << torchfit::runtime::format_header(torchfit::runtime::environment_info(device, a.threads)) << "\n\n";
  std::cout << "C = A.B, float32, A and B ~ U[0,1) (seed " << a.opt.seed << "); times are medians; LibTorch CPU uses "
            << used << " thread(s), the naive loop 1; CUDA: " << a.opt.cuda_warmup
            << " warm-up products excluded, synchronised before each clock read"
            << (a.opt.run_cuda ? "" : " (not run: no CUDA)") << ".\n"
            << "share = GFLOP/s / best GFLOP/s measured in this run on the same device kind; "
               "max rel err = max|C - C64| / max|C64| vs a float64 product.\n\n";
  std::cout.flush();
}

int run(Args& a) {
  const int used = torchfit::runtime::init_process(a.threads);
  a.opt.run_cuda = use_cuda(a.cuda_mode);
  print_intro(a, used);
  const auto rows = torchfit::runtime::run_matmul_bench(a.opt, [&](const torchfit::runtime::MatmulRow& r) {
    torchfit::logger().debug("n={} {} {} {:.3f} ms", r.n, r.method, r.device, r.ms);
  });
  std::cout << torchfit::runtime::format_matmul_table(rows);
  for (const auto& r : rows) {
    if (!r.valid) {
      std::cout << "\nThe unsynchronised row is the time to LAUNCH the CUDA kernel, read before the GPU finished "
                   "(the articles' 28.8 us for 500x500 was read this way); it is not the product's time.\n";
      break;
    }
  }
  if (!a.csv_path.empty()) {
    torchfit::io::write_text_atomically(a.csv_path, matmul_bench::matmul_csv(rows));
    std::cout << "wrote " << a.csv_path << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"matmul_bench: naive loop vs LibTorch CPU vs LibTorch CUDA for n x n float32 products"};
  Args a;
  add_flags(app, a);
  TORCHFIT_CLI_PARSE(app, argc, argv);
  return torchfit::apps::run_reporting_errors("matmul_bench", [&] { return run(a); });
}
