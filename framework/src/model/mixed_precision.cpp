#include <torchfit/model/mixed_precision.h>

#include <mutex>
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
    return "this CPU has no AVX512-BF16 or AMX-BF16 instructions: LibTorch emulates bfloat16 products, "
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

bool cpu_has_bf16_instructions() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
#else
  return false;
#endif
}

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
