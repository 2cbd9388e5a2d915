#pragma once
/// @file mixed_precision.h
/// Dtype policies for mixed-precision training, as keras.mixed_precision (Policy, set_global_policy,
/// global_policy). docs/training.md "Mixed precision" says what each policy does on which hardware.
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>
#include <vector>

namespace torchfit::mixed_precision {

/// A dtype policy (keras.mixed_precision.Policy): the dtype the layers compute in and the dtype of their
/// variables. Names, as Keras:
///  - "float32" (default): everything float32.
///  - "mixed_bfloat16": layers compute in bfloat16 through LibTorch autocast (convolutions and matrix
///    products in bf16, activations kept in bf16); variables (weights, optimizer state) stay float32.
///  - "mixed_float16": the same in float16, with dynamic loss scaling (the Trainer adds a LossScaleOptimizer, as
///    Keras's compile wraps the optimizer in a LossScaleOptimizer). CUDA only.
/// Under a mixed policy the model's input is cast to the compute dtype and the last layer's output back
/// to float32 before its activation (softmax/sigmoid), so the output and the loss are float32 — the
/// `Activation(..., dtype="float32")` Keras's mixed-precision guide asks for.
class Policy {
 public:
  /// Errors: ConfigError naming `name` and the three accepted names.
  explicit Policy(const std::string& name = "float32");

  const std::string& name() const { return name_; }
  /// at::kFloat, at::kBFloat16 or at::kHalf.
  at::ScalarType compute_dtype() const { return compute_dtype_; }
  /// Always at::kFloat (Keras: variables of a mixed policy are float32).
  at::ScalarType variable_dtype() const { return at::kFloat; }
  /// compute_dtype() != variable_dtype().
  bool is_mixed() const { return compute_dtype_ != at::kFloat; }
  /// True for mixed_float16 (float16's range needs loss scaling; bfloat16's does not).
  bool needs_loss_scaling() const { return compute_dtype_ == at::kHalf; }

  bool operator==(const Policy& o) const { return name_ == o.name_; }
  bool operator!=(const Policy& o) const { return !(*this == o); }

 private:
  std::string name_;
  at::ScalarType compute_dtype_ = at::kFloat;
};

/// Keras's name of a floating dtype: "float32", "bfloat16", "float16" (LibTorch's name for others).
std::string dtype_name(at::ScalarType dtype);

/// The accepted policy names: float32, mixed_bfloat16, mixed_float16.
const std::vector<std::string>& policy_names();

/// Sets the policy models take when they are created (keras.mixed_precision.set_global_policy): a
/// Sequential built afterwards (also by from_json without a "dtype_policy") uses it; existing models keep
/// theirs (SequentialImpl::set_dtype_policy changes one). Process-wide, not thread-safe against
/// concurrent model creation. Errors: ConfigError for an unknown name.
void set_global_policy(const Policy& policy);
void set_global_policy(const std::string& name);
/// The current global policy (default "float32").
Policy global_policy();

/// Whether `policy` is worth running on `device`: "" when it is, else the reason. Refused
/// (check_supported throws): mixed_float16 on the CPU — LibTorch's CPU autocast computes in bfloat16
/// only. Warned (check_supported logs the reason once and goes on): mixed_bfloat16 on a CPU without
/// AVX512-BF16 or AMX-BF16 instructions (bf16 products are emulated there, slower than float32), and on
/// a CUDA GPU of compute capability < 8.0 (no bf16 tensor cores).
/// Errors: ConfigError for a refused pair, naming the policy, the device and the reason.
void check_supported(const Policy& policy, const c10::Device& device);

/// Whether bfloat16 products run natively here: this CPU has bfloat16 dot-product instructions
/// (AVX512-BF16 or AMX-BF16) and oneDNN, which runs LibTorch's bf16 convolutions and matrix products, is
/// allowed to use them — false when ONEDNN_MAX_CPU_ISA (or the older DNNL_MAX_CPU_ISA) caps it below
/// AVX512_CORE_BF16 (e.g. "AVX2", "AVX512_CORE", "AVX512_CORE_VNNI"), as oneDNN's documentation defines
/// the variable. Elsewhere bf16 products are emulated and slower than float32.
bool cpu_has_bf16_instructions();

/// Whether oneDNN's ISA cap `isa` (a value of ONEDNN_MAX_CPU_ISA, any case; "" = no cap) lets it use
/// bfloat16 instructions: false for SSE41, AVX, AVX2, AVX2_VNNI, AVX2_VNNI_2, AVX512_CORE,
/// AVX512_CORE_VNNI (and the AVX512_MIC values), true for AVX512_CORE_BF16 and every later ISA, ALL,
/// DEFAULT and "".
bool onednn_isa_allows_bf16(const std::string& isa);

/// Turns LibTorch autocast on for `device`'s type with `policy`'s compute dtype while alive, and restores
/// the previous state when it ends (the outermost scope also clears autocast's cache of cast weights).
/// Nothing for a float32 policy. Keras applies a policy per layer call; LibTorch autocast per operator:
/// convolutions and matrix products run in the compute dtype, the ops that need float32 (losses, norms
/// on CUDA) stay float32.
class AutocastScope {
 public:
  AutocastScope(const Policy& policy, const c10::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType device_type_ = c10::DeviceType::CPU;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

}  // namespace torchfit::mixed_precision
