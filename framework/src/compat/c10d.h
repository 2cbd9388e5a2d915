// Private to framework/src/distributed: c10d's API differences between LibTorch 1.13 (Debian 12) and 2.x
// (Debian 13's 2.6, pip 2.11). Included only when CMake found the gloo headers (TORCHFIT_WITH_DISTRIBUTED).
#pragma once

#include <torch/version.h>

#include <string>

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

namespace detail {
template <typename Options>
auto set_libuv(Options& o, bool on, int) -> decltype(o.useLibUV = on, bool()) {
  o.useLibUV = on;
  return true;
}
template <typename Options>
bool set_libuv(Options&, bool, long) {
  return false;
}
}  // namespace detail

/// A TCPStore at host:o.port. LibTorch 2.x's store server defaults to its libuv backend (`useLibUV`,
/// true since 2.4), which a LibTorch built without libuv refuses ("use_libuv was requested but PyTorch
/// was build without libuv support": Debian 13's 2.6); 1.x has no such option. So: libuv where the
/// build has it (pip's 2.x), else the classic backend. Throws c10::Error for any other failure.
inline c10::intrusive_ptr<c10d::TCPStore> make_tcp_store(const std::string& host, c10d::TCPStoreOptions o) {
  try {
    return c10::make_intrusive<c10d::TCPStore>(host, o);
  } catch (const c10::Error& e) {
    if (std::string(e.what()).find("libuv") == std::string::npos || !detail::set_libuv(o, false, 0)) throw;
    return c10::make_intrusive<c10d::TCPStore>(host, o);
  }
}

}  // namespace torchfit::compat
