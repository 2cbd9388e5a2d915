#include "torchfit/runtime/matmul.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "torchfit/runtime/device.h"

namespace torchfit::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Repeats `fn` (which returns its own measured ms) until min_time/min_repeats/max_repeats say stop.
template <class F>
std::vector<double> repeat(F&& fn, double min_time_s, int min_repeats, int max_repeats) {
  std::vector<double> times;
  double total = 0;
  while (static_cast<int>(times.size()) < max_repeats &&
         (static_cast<int>(times.size()) < min_repeats || total < min_time_s * 1000.0)) {
    times.push_back(fn());
    total += times.back();
  }
  return times;
}

}  // namespace

at::Tensor naive_matmul(const at::Tensor& a_in, const at::Tensor& b_in) {
  if (a_in.dim() != 2 || b_in.dim() != 2 || a_in.scalar_type() != at::kFloat || b_in.scalar_type() != at::kFloat ||
      !a_in.device().is_cpu() || !b_in.device().is_cpu()) {
    throw std::invalid_argument("naive_matmul: expects 2-D float32 CPU tensors");
  }
  if (a_in.size(1) != b_in.size(0)) {
    throw std::invalid_argument("naive_matmul: inner sizes differ (" + std::to_string(a_in.size(1)) + " vs " +
                                std::to_string(b_in.size(0)) + ")");
  }
  const at::Tensor a = a_in.contiguous();
  const at::Tensor b = b_in.contiguous();
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  at::Tensor c = at::empty({n, m}, a.options());
  const float* A = a.data_ptr<float>();
  const float* B = b.data_ptr<float>();
  float* C = c.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p) s += A[i * k + p] * B[p * m + j];
      C[i * m + j] = s;
    }
  }
  return c;
}

double max_relative_error(const at::Tensor& result, const at::Tensor& reference) {
  if (result.sizes() != reference.sizes()) {
    throw std::invalid_argument("max_relative_error: shapes differ");
  }
  const at::Tensor r = result.to(at::kCPU).to(at::kDouble);
  const at::Tensor ref = reference.to(at::kCPU).to(at::kDouble);
  const double denom = ref.abs().max().item<double>();
  const double num = (r - ref).abs().max().item<double>();
  if (denom == 0.0) return num == 0.0 ? 0.0 : num;
  return num / denom;
}

namespace {

// One result row; `c` is the product the timed runs computed, checked against `reference`.
MatmulRow make_row(int64_t n, const std::string& method, const std::string& device, int threads,
                   const std::vector<double>& times, const at::Tensor& c, const at::Tensor& reference) {
  MatmulRow r;
  r.n = n;
  r.method = method;
  r.device = device;
  r.threads = threads;
  r.repeats = static_cast<int>(times.size());
  r.ms = median(times);
  r.max_rel_error = max_relative_error(c, reference);
  return r;
}

// The naive loop on one thread (at least one run, however long it takes).
MatmulRow time_naive(const at::Tensor& a, const at::Tensor& b, const at::Tensor& reference,
                     const MatmulBenchOptions& o) {
  at::Tensor c;
  const auto times = repeat(
      [&] {
        const auto t0 = Clock::now();
        c = naive_matmul(a, b);
        return ms_since(t0, Clock::now());
      },
      o.min_time_s, 1, o.max_repeats);
  return make_row(a.size(0), "naive i-j-k loop", "cpu", 1, times, c, reference);
}

// LibTorch on the CPU with all its threads, after one untimed warm-up product.
MatmulRow time_cpu_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& reference,
                      const MatmulBenchOptions& o, int threads) {
  const int64_t n = a.size(0);
  at::Tensor c = at::empty({n, n}, a.options());
  at::mm_out(c, a, b);  // warm-up: first call sets up OpenMP threads and BLAS buffers
  const auto times = repeat(
      [&] {
        const auto t0 = Clock::now();
        at::mm_out(c, a, b);
        return ms_since(t0, Clock::now());
      },
      o.min_time_s, o.min_repeats, o.max_repeats);
  return make_row(n, "LibTorch at::mm", "cpu", threads, times, c, reference);
}

// The CUDA operands of one size: inputs copied to the device and the output buffer.
struct CudaOperands {
  at::Tensor a, b, c;
};

// LibTorch on `cuda` after `cuda_warmup` untimed products, synchronised before every clock read.
MatmulRow time_cuda_mm(const CudaOperands& d, const at::Tensor& reference, const MatmulBenchOptions& o, int threads,
                       const c10::Device& cuda) {
  at::Tensor dc = d.c;
  for (int i = 0; i < std::max(1, o.cuda_warmup); ++i) at::mm_out(dc, d.a, d.b);
  synchronize(cuda);
  const auto synced = repeat(
      [&] {
        const auto t0 = Clock::now();
        at::mm_out(dc, d.a, d.b);
        synchronize(cuda);  // wait for the kernel before reading the clock
        return ms_since(t0, Clock::now());
      },
      o.min_time_s, o.min_repeats, o.max_repeats);
  return make_row(d.a.size(0), "LibTorch at::mm", cuda.str(), threads, synced, dc, reference);
}

// What the article measured: the clock read right after the (asynchronous) launch; `synced` is the
// row of time_cuda_mm, whose repeat count it reuses. Marked invalid (not a product's time).
MatmulRow time_cuda_launch(const CudaOperands& d, const MatmulRow& synced, const c10::Device& cuda) {
  at::Tensor dc = d.c;
  std::vector<double> launch;
  for (int i = 0; i < synced.repeats; ++i) {
    const auto t0 = Clock::now();
    at::mm_out(dc, d.a, d.b);
    launch.push_back(ms_since(t0, Clock::now()));
    synchronize(cuda);  // outside the timed region, so launches do not queue up
  }
  MatmulRow u = synced;
  u.method = "LibTorch at::mm (unsynchronised)";
  u.ms = median(launch);
  u.valid = false;
  return u;
}

// Derived columns: GFLOP/s, speedup over the naive loop at the same n, share of the best rate.
void add_derived_columns(std::vector<MatmulRow>& rows) {
  std::map<int64_t, double> naive_by_n;
  for (const auto& r : rows) {
    if (r.method == "naive i-j-k loop") naive_by_n[r.n] = r.ms;
  }
  std::map<std::string, double> best;  // device kind -> best valid GFLOP/s
  for (auto& r : rows) {
    const double flop = 2.0 * static_cast<double>(r.n) * static_cast<double>(r.n) * static_cast<double>(r.n);
    r.gflops = r.ms > 0 ? flop / (r.ms * 1e6) : 0.0;
    const auto it = naive_by_n.find(r.n);
    r.speedup_vs_naive = (it != naive_by_n.end() && r.ms > 0) ? it->second / r.ms : 0.0;
    const std::string kind = r.device.substr(0, r.device.find(':'));
    if (r.valid) best[kind] = std::max(best[kind], r.gflops);
  }
  for (auto& r : rows) {
    const std::string kind = r.device.substr(0, r.device.find(':'));
    r.share_of_best = best[kind] > 0 ? r.gflops / best[kind] : 0.0;
  }
}

}  // namespace

std::vector<MatmulRow> run_matmul_bench(const MatmulBenchOptions& o,
                                        const std::function<void(const MatmulRow&)>& progress) {
  for (auto n : o.sizes) {
    if (n < 1) throw std::invalid_argument("matmul bench: size must be >= 1, got " + std::to_string(n));
  }
  std::vector<MatmulRow> rows;
  const int threads = at::get_num_threads();
  auto gen = at::detail::createCPUGenerator(o.seed);
  const c10::Device cuda(c10::DeviceType::CUDA, 0);
  auto emit = [&](MatmulRow row) {
    rows.push_back(row);
    if (progress) progress(row);
  };
  for (const int64_t n : o.sizes) {
    const at::Tensor a = at::rand({n, n}, gen, at::TensorOptions().dtype(at::kFloat));
    const at::Tensor b = at::rand({n, n}, gen, at::TensorOptions().dtype(at::kFloat));
    const at::Tensor reference = at::mm(a.to(at::kDouble), b.to(at::kDouble));
    if (n <= o.naive_max) emit(time_naive(a, b, reference, o));
    emit(time_cpu_mm(a, b, reference, o, threads));
    if (o.run_cuda) {
      const at::Tensor da = a.to(cuda);
      const CudaOperands dev{da, b.to(cuda), at::empty({n, n}, da.options())};
      const MatmulRow synced = time_cuda_mm(dev, reference, o, threads, cuda);
      emit(synced);
      emit(time_cuda_launch(dev, synced, cuda));
    }
  }
  add_derived_columns(rows);
  return rows;
}

std::string format_matmul_table(const std::vector<MatmulRow>& rows) {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof(line), "%6s  %-34s %-7s %3s %4s %12s %10s %10s %8s %12s\n", "n", "method", "device", "thr",
                "reps", "ms", "GFLOP/s", "x naive", "share", "max rel err");
  o << line;
  for (const auto& r : rows) {
    char speed[32] = "-";
    if (r.speedup_vs_naive > 0) std::snprintf(speed, sizeof(speed), "%.1f", r.speedup_vs_naive);
    char share[32];
    std::snprintf(share, sizeof(share), r.valid ? "%.1f%%" : "(%.0f%%)", r.share_of_best * 100.0);
    std::snprintf(line, sizeof(line), "%6lld  %-34s %-7s %3d %4d %12.4f %10.2f %10s %8s %12.2e\n",
                  static_cast<long long>(r.n), r.method.c_str(), r.device.c_str(), r.threads, r.repeats, r.ms, r.gflops,
                  speed, share, r.max_rel_error);
    o << line;
  }
  return o.str();
}

}  // namespace torchfit::runtime
