#include "torchfit/runtime/env_info.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <opencv2/core/version.hpp>

#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "runtime/gpu_properties.h"
#include "torchfit/runtime/process.h"

#ifndef TORCHFIT_VERSION
#define TORCHFIT_VERSION "unknown"
#endif

namespace torchfit::runtime {
namespace {

using nlohmann::json;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    // x86: "model name"; some ARM kernels: "Model" or "Hardware".
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0 || line.rfind("Hardware", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return trim(line.substr(colon + 1));
    }
  }
  return "unknown";
}

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

// Version "major.minor[.patch]" from CUDA's integer encodings (12010 -> 12.1, cuDNN 8902 -> 8.9.2,
// cuDNN 9.x: 90100 -> 9.1.0).
std::string cuda_version_string(long v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
std::string cudnn_version_string(long v) {
  if (v >= 90000)
    return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 100) + "." + std::to_string(v % 100);
}

std::string config_value(const std::string& config, const std::string& key) {
  const auto pos = config.find(key + "=");
  if (pos == std::string::npos) return "";
  const auto start = pos + key.size() + 1;
  const auto end = config.find_first_of(",\n", start);
  return trim(config.substr(start, end == std::string::npos ? std::string::npos : end - start));
}

std::string line_value(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto t = trim(line);
    if (t.rfind(prefix, 0) == 0) return trim(t.substr(prefix.size()));
  }
  return "";
}

json blas_libraries() {
  std::set<std::string> libs;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string file = path.substr(path.rfind('/') + 1);
    if (file.find("blas") != std::string::npos || file.find("lapack") != std::string::npos ||
        file.find("libmkl") != std::string::npos) {
      libs.insert(path);
    }
  }
  return json(std::vector<std::string>(libs.begin(), libs.end()));
}

std::string str_or(const json& j, const char* key, const std::string& fallback = "unknown") {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return fallback;
  const auto& v = j.at(key);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

nlohmann::json environment_info(const c10::Device& device, int threads) {
  json info;
  info["torchfit_version"] = TORCHFIT_VERSION;
  info["libtorch_version"] = TORCH_VERSION;
  info["torchfit_cuda_code"] = detail::built_with_cuda();
  info["host"] = hostname();
  info["device"] = device.str();

  // CUDA: every query guarded; the CPU-only hooks throw.
  json cuda;
  const std::string reason = detail::cuda_unavailable_reason();
  cuda["available"] = reason.empty();
  cuda["unavailable_reason"] = reason.empty() ? json(nullptr) : json(reason);
  cuda["device_count"] = reason.empty() ? static_cast<int>(torch::cuda::device_count()) : 0;
  cuda["runtime_version"] = nullptr;
  cuda["cudnn_version"] = nullptr;
  const auto& hooks = at::detail::getCUDAHooks();
  try {
    cuda["runtime_version"] = cuda_version_string(hooks.versionCUDART());
  } catch (const std::exception&) {
  }
  try {
    if (hooks.hasCuDNN()) cuda["cudnn_version"] = cudnn_version_string(hooks.versionCuDNN());
  } catch (const std::exception&) {
  }
  info["cuda"] = cuda;
  if (cuda["runtime_version"].is_null()) {
    info["build"] = "CPU-only LibTorch";
  } else {
    info["build"] =
        "CUDA " + cuda["runtime_version"].get<std::string>() + ", cuDNN " +
        (cuda["cudnn_version"].is_null() ? std::string("not available") : cuda["cudnn_version"].get<std::string>());
  }

  json gpus = json::array();
  for (const auto& g : detail::gpu_properties()) {
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"compute_capability", std::to_string(g.major) + "." + std::to_string(g.minor)},
                    {"memory_bytes", g.total_memory_bytes},
                    {"memory_gib", static_cast<double>(g.total_memory_bytes) / (1024.0 * 1024.0 * 1024.0)},
                    {"multiprocessors", g.multiprocessors}});
  }
  info["gpus"] = gpus;

  info["cpu"] = {{"model", cpu_model()},
                 {"logical_cpus", static_cast<int>(std::thread::hardware_concurrency())},
                 {"cores_available", cpu_cores()}};
  info["threads"] = {
      {"requested", threads}, {"intra_op", at::get_num_threads()}, {"inter_op", at::get_num_interop_threads()}};

  const std::string parallel = at::get_parallel_info();
  const std::string config = at::show_config();
  info["parallel_info"] = parallel;
  info["parallel_backend"] = line_value(parallel, "ATen parallel backend:");
  info["blas_info"] = config_value(config, "BLAS_INFO");
  info["blas_libraries"] = blas_libraries();
  info["build_config"] = config;
  info["opencv_version"] = CV_VERSION;
  const MemoryRetention mem = memory_retention();
  info["memory_retention"] = {{"applied", mem.applied}, {"method", mem.method}};
  const BlasKernels blas = blas_kernels();
  info["blas_kernels"] = {
      {"openblas", blas.openblas}, {"detected", blas.detected}, {"active", blas.active}, {"method", blas.method}};
  return info;
}

std::string format_header(const nlohmann::json& info) {
  std::ostringstream o;
  o << "torchfit " << str_or(info, "torchfit_version") << " on " << str_or(info, "host");
  o << "\n  LibTorch   " << str_or(info, "libtorch_version") << " (" << str_or(info, "build") << ")";
  const json cuda = info.contains("cuda") ? info["cuda"] : json::object();
  if (cuda.is_object() && cuda.value("available", false)) {
    o << "\n  CUDA       available, " << cuda.value("device_count", 0) << " device(s), runtime "
      << str_or(cuda, "runtime_version") << ", cuDNN " << str_or(cuda, "cudnn_version", "not available");
  } else {
    o << "\n  CUDA       not available: " << str_or(cuda, "unavailable_reason");
  }
  if (info.contains("gpus") && info["gpus"].is_array()) {
    for (const auto& g : info["gpus"]) {
      char mem[32];
      std::snprintf(mem, sizeof(mem), "%.1f GiB", g.value("memory_gib", 0.0));
      o << "\n  GPU " << g.value("index", 0) << "      " << str_or(g, "name") << ", compute capability "
        << str_or(g, "compute_capability") << ", " << mem << ", " << g.value("multiprocessors", 0) << " SMs";
    }
  }
  const json cpu = info.contains("cpu") ? info["cpu"] : json::object();
  o << "\n  CPU        " << str_or(cpu, "model") << ", " << str_or(cpu, "cores_available") << " cores available";
  const json th = info.contains("threads") ? info["threads"] : json::object();
  const int requested = th.value("requested", 0);
  o << "\n  Threads    " << str_or(th, "intra_op") << " intra-op, " << str_or(th, "inter_op")
    << " inter-op (requested: " << (requested > 0 ? std::to_string(requested) : std::string("default = all cores"))
    << ")";
  o << "\n  Parallel   " << str_or(info, "parallel_backend") << "; BLAS_INFO=" << str_or(info, "blas_info");
  std::string blas = "none found in the process";
  if (info.contains("blas_libraries") && info["blas_libraries"].is_array() && !info["blas_libraries"].empty()) {
    blas.clear();
    for (const auto& l : info["blas_libraries"]) blas += (blas.empty() ? "" : ", ") + l.get<std::string>();
  }
  o << "\n  BLAS       " << blas;
  if (info.contains("blas_kernels") && info["blas_kernels"].is_object())
    o << "\n  Kernels    " << str_or(info["blas_kernels"], "method");
  o << "\n  OpenCV     " << str_or(info, "opencv_version");
  const json mem = info.contains("memory_retention") ? info["memory_retention"] : json::object();
  o << "\n  Memory     " << str_or(mem, "method");
  o << "\n  Device     " << str_or(info, "device");
  return o.str();
}

}  // namespace torchfit::runtime
