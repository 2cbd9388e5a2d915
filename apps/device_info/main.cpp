// device_info: prints what torchfit runs on (the same header train_cnn prints).
//   device_info [--device cpu|cuda|cuda:N|auto] [--threads N] [--gpu-memory-fraction F] [--json]
// Exit status 0; 2 for a bad flag value (e.g. --device cuda on a CPU-only build).
#include <CLI/CLI.hpp>

#include <spdlog/spdlog.h>
#include "../common/cli.h"

#include <iostream>

#include "torchfit/runtime/device.h"
#include "torchfit/runtime/env_info.h"
#include "torchfit/runtime/process.h"

int main(int argc, char** argv) {
  CLI::App app{"device_info: LibTorch/CUDA/cuDNN versions, GPUs, CPU, threads, BLAS and OpenCV of this build"};
  std::string device_spec = "auto";
  int threads = 0;
  bool as_json = false;
  double memory_fraction = 0.0;
  torchfit::apps::add_device_flag(app, device_spec, "cpu | cuda | cuda:N | auto (CUDA when available)");
  torchfit::apps::add_threads_flag(app, threads, "LibTorch intra-op threads (0 = all cores)");
  app.add_option("--gpu-memory-fraction", memory_fraction,
                 "cap LibTorch's CUDA caching allocator at this share of GPU memory, 0 < F <= 1 (checks the "
                 "mechanism; default: no cap, memory grows on demand)");
  app.add_flag("--json", as_json, "print the environment as JSON instead of the header");
  TORCHFIT_CLI_PARSE(app, argc, argv);

  try {
    if (as_json) spdlog::set_level(spdlog::level::warn);  // logs are on stderr; only warnings next to JSON
    const int used = torchfit::runtime::init_process(threads);
    (void)used;
    const auto device = torchfit::runtime::parse_device(device_spec);
    if (memory_fraction != 0.0) torchfit::apps::set_gpu_memory_fraction_flag(memory_fraction, device);
    auto info = torchfit::runtime::environment_info(device, threads);
    if (memory_fraction != 0.0) info["gpu_memory_fraction"] = memory_fraction;
    if (as_json) {
      std::cout << info.dump(2) << std::endl;
    } else {
      std::cout << torchfit::runtime::format_header(info) << std::endl;
    }
  } catch (const std::exception& e) {
    std::cerr << "device_info: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}
