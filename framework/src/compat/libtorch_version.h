// Private to framework/src: every difference in LibTorch's C++ API between the versions torchfit builds
// against (Debian 12's 1.13, and 2.x from Debian 13 or the PyTorch site) lives in this one header.
// Code elsewhere calls these helpers and never tests LibTorch's version or internals itself; a later
// difference that cannot be read from a type goes here, keyed on <torch/version.h>.
// Verified against 1.13.1 (Debian 12), 2.6.0 (Debian 13, CUDA) and 2.11 (pip, CUDA 13); docs/gpu.md.
#pragma once

#include <torch/optim/optimizer.h>

#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace torchfit::compat {

/// The key type of `torch::optim::Optimizer::state()`. LibTorch 1.x keys a parameter's state by a
/// string made from its TensorImpl address (`c10::guts::to_string`, which 2.x removed); 2.x keys it
/// by the TensorImpl address itself. Read from the map's own type rather than from a version number,
/// so a release that changes it in between still compiles and agrees with LibTorch's optimizers.
using OptimizerStateKey =
    typename std::remove_reference_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

namespace detail {
template <class Key>
Key optimizer_state_key_of(c10::TensorImpl* impl) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream s;  // what c10::guts::to_string(TensorImpl*) wrote: the pointer via operator<<
    s << impl;
    return s.str();
  } else {
    return impl;
  }
}
}  // namespace detail

/// The key under which LibTorch's own optimizers keep parameter `p`'s state (exp_avg, step, ...), so
/// state moves between torchfit's FusedAdam and torch::optim::Adam (and through checkpoints).
inline OptimizerStateKey optimizer_state_key(const at::Tensor& p) {
  return detail::optimizer_state_key_of<OptimizerStateKey>(p.unsafeGetTensorImpl());
}

}  // namespace torchfit::compat
