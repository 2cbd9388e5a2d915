// Private to framework/src/distributed: c10d's API differences between LibTorch 1.13 (Debian 12) and 2.x
// (Debian 13's 2.6, pip 2.11). Included only when CMake found the gloo headers (TORCHFIT_WITH_DISTRIBUTED).
#pragma once

#include <torch/version.h>

// c10d's backend headers are compiled only with these set (LibTorch's own build defines them).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#if defined(TORCHFIT_WITH_NCCL) && !defined(USE_C10D_NCCL)
#define USE_C10D_NCCL 1
#endif

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef TORCHFIT_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace torchfit::compat {

/// The class the concrete backends (ProcessGroupGloo, ProcessGroupNCCL) derive from and whose
/// allreduce/broadcast/barrier return a c10d::Work: 1.x calls it ProcessGroup; 2.x split that into a
/// ProcessGroup front end over per-device Backends, and the concrete classes became Backends.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

/// c10d's NCCL options with `timeout` (a field of ProcessGroup::Options in 1.x, Backend::Options in 2.x:
/// same name, same type).
#ifdef TORCHFIT_WITH_NCCL
inline c10::intrusive_ptr<c10d::ProcessGroupNCCL::Options> nccl_options(std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return options;
}
#endif

}  // namespace torchfit::compat
