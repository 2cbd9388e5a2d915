#include <torchfit/model/mixed_precision.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iterator>
#include <mutex>

#include <ATen/Context.h>
#include <set>

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>

#include "compat/autocast.h"
#include "runtime/gpu_properties.h"

namespace torchfit::mixed_precision {
namespace {

Policy& global() {
  static Policy policy("float32");
  return policy;
}

// Each (policy, device) warning once per process: fit() and every forward() check again.
void warn_once(const std::string& key, const std::string& text) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(key).second) torchfit::logger().warn("{}", text);
}

// The reason a policy is refused on `device` ("" when it is not).
std::string refusal(const Policy& policy, const c10::Device& device) {
  if (policy.compute_dtype() == at::kHalf && device.is_cpu()) {
    return "LibTorch's CPU autocast computes in bfloat16 only (float16 on the CPU has no fast kernels); use "
           "mixed_bfloat16 on the CPU, or mixed_float16 on a CUDA device";
  }
  if (policy.is_mixed() && !device.is_cpu() && !device.is_cuda()) {
    return "mixed precision runs on the CPU and CUDA devices only";
  }
  return "";
}

// The reason a policy is slower than float32 on `device` ("" when it is not known to be).
std::string slowdown(const Policy& policy, const c10::Device& device) {
  if (policy.compute_dtype() != at::kBFloat16) return "";
  if (device.is_cpu() && !cpu_has_bf16_instructions()) {
    return "this CPU has no AVX512-BF16 or AMX-BF16 instructions (or ONEDNN_MAX_CPU_ISA keeps oneDNN from them): "
           "LibTorch emulates bfloat16 products, "
           "which makes mixed_bfloat16 slower than float32 here";
  }
  if (device.is_cuda()) {
    for (const auto& g : runtime::detail::gpu_properties()) {
      if (g.index == (device.has_index() ? device.index() : 0) && g.major < 8) {
        return "GPU " + g.name + " (compute capability " + std::to_string(g.major) + "." + std::to_string(g.minor) +
               ") has no bfloat16 tensor cores (they start at 8.0): use mixed_float16 there";
      }
    }
  }
  return "";
}

}  // namespace

std::string dtype_name(at::ScalarType dtype) {
  if (dtype == at::kFloat) return "float32";
  if (dtype == at::kBFloat16) return "bfloat16";
  if (dtype == at::kHalf) return "float16";
  return c10::toString(dtype);
}

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = {"float32", "mixed_bfloat16", "mixed_float16"};
  return names;
}

Policy::Policy(const std::string& name) : name_(name) {
  if (name == "float32") {
    compute_dtype_ = at::kFloat;
  } else if (name == "mixed_bfloat16") {
    compute_dtype_ = at::kBFloat16;
  } else if (name == "mixed_float16") {
    compute_dtype_ = at::kHalf;
  } else {
    throw ConfigError("unknown dtype policy '" + name + "' (accepted: float32, mixed_bfloat16, mixed_float16)");
  }
}

void set_global_policy(const Policy& policy) { global() = policy; }
void set_global_policy(const std::string& name) { global() = Policy(name); }
Policy global_policy() { return global(); }

namespace {

// oneDNN's ISA cap values (ONEDNN_MAX_CPU_ISA, its docs' "CPU dispatcher control"), lowest first; a value
// not listed (ALL, DEFAULT, later ISAs) caps nothing we act on.
constexpr const char* kOnednnIsas[] = {
    "SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI", "AVX512_CORE_BF16"};
constexpr int kAvx512Core = 5, kAvx512CoreBf16 = 7, kNoCap = 100;

int onednn_isa_rank(const std::string& isa) {
  std::string upper = isa;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "AVX512_MIC" || upper == "AVX512_MIC_4OPS") return kAvx512Core - 1;  // no AVX512_CORE
  for (int i = 0; i < static_cast<int>(std::size(kOnednnIsas)); ++i) {
    if (upper == kOnednnIsas[i]) return i;
  }
  return kNoCap;
}

// The rank of the cap set in the environment (kNoCap without one).
int onednn_isa_cap() {
  int rank = kNoCap;
  for (const char* variable : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    const char* isa = std::getenv(variable);
    if (isa != nullptr) rank = std::min(rank, onednn_isa_rank(isa));
  }
  return rank;
}

// The CPU's own flags (__builtin_cpu_supports takes literals only).
#if defined(__x86_64__) && defined(__GNUC__)
bool cpu_has_avx512_bw_vl_dq() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
bool cpu_has_bf16_dot_products() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
}
#else
bool cpu_has_avx512_bw_vl_dq() { return false; }
bool cpu_has_bf16_dot_products() { return false; }
#endif

// LibTorch 1.x on an AVX-512 CPU sends bf16 convolutions to oneDNN even when ONEDNN_MAX_CPU_ISA caps it
// below AVX512_CORE, where oneDNN has no bf16 kernels ("could not create a primitive descriptor"). Turning
// oneDNN off then gives the path LibTorch takes on a CPU without AVX-512 (ATen's own bf16 kernels).
void avoid_capped_onednn_for_bf16() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!compat::kAtenBf16IgnoresOnednnIsaCap || onednn_isa_cap() >= kAvx512Core) return;
    if (!cpu_has_avx512_bw_vl_dq()) return;
    at::globalContext().setUserEnabledMkldnn(false);
    torchfit::logger().warn(
        "ONEDNN_MAX_CPU_ISA caps oneDNN below AVX512_CORE, where it has no bfloat16 kernels: oneDNN is turned off "
        "for this process, so bfloat16 runs on LibTorch's own kernels as on a CPU without AVX-512");
  });
}

}  // namespace

bool onednn_isa_allows_bf16(const std::string& isa) {
  const int rank = onednn_isa_rank(isa);
  return rank == kNoCap || rank >= kAvx512CoreBf16;
}

bool cpu_has_bf16_instructions() { return cpu_has_bf16_dot_products() && onednn_isa_cap() >= kAvx512CoreBf16; }

void check_supported(const Policy& policy, const c10::Device& device) {
  const std::string refused = refusal(policy, device);
  if (!refused.empty()) {
    throw ConfigError("dtype policy " + policy.name() + " on " + device.str() + ": " + refused);
  }
  const std::string slow = slowdown(policy, device);
  if (!slow.empty()) warn_once(policy.name() + "@" + device.str(), "dtype policy " + policy.name() + ": " + slow);
}

AutocastScope::AutocastScope(const Policy& policy, const c10::Device& device) {
  if (!policy.is_mixed()) return;
  const std::string refused = refusal(policy, device);  // the warnings are check_supported's (once per fit)
  if (!refused.empty()) throw ConfigError("dtype policy " + policy.name() + " on " + device.str() + ": " + refused);
  if (device.is_cpu() && policy.compute_dtype() == at::kBFloat16) avoid_capped_onednn_for_bf16();
  active_ = true;
  device_type_ = device.type();
  previous_enabled_ = compat::autocast_enabled(device_type_);
  previous_dtype_ = compat::autocast_dtype(device_type_);
  compat::set_autocast(device_type_, true, policy.compute_dtype());
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The outermost scope drops the cast copies of the weights autocast kept for this pass.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::set_autocast(device_type_, previous_enabled_, previous_dtype_);
}

}  // namespace torchfit::mixed_precision
