#pragma once
/// @file process_group.h
/// A data-parallel process group on PyTorch's c10d: Gloo (CPU) or NCCL (CUDA) collectives between the
/// processes torchrun started, with a rendezvous over c10d's TCPStore. C++ has no
/// DistributedDataParallel: GradientReducer (gradient_reducer.h) averages gradients over this group.
#include <ATen/ATen.h>
#include <c10/core/Device.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <torchfit/distributed/environment.h>
#include <torchfit/error.h>

namespace torchfit::distributed {

/// A collective failed or timed out: a peer process died, hung, or the network failed. The message
/// names this rank, the operation and, when it can be told, the failed peer.
class CommunicationError : public Error {
 public:
  using Error::Error;
};

/// Default of ProcessGroupOptions::timeout (and of train_cnn --dist-timeout): 300 s.
inline constexpr int kDefaultTimeoutSeconds = 300;

/// How to build the group.
struct ProcessGroupOptions {
  /// "auto" (NCCL for a CUDA device when built with it, else Gloo), "gloo" or "nccl".
  std::string backend = "auto";
  /// Limit for the rendezvous (all ranks present) and for every collective: a peer that dies is
  /// reported at once, a peer that hangs after this long (c10d's defaults, 30 min and 300 s, are
  /// replaced by this one value).
  std::chrono::seconds timeout{kDefaultTimeoutSeconds};
  /// Where tensors live: CPU, or cuda:LOCAL_RANK for NCCL.
  c10::Device device = c10::Device(c10::kCPU);
};

/// Whether this torchfit was built with c10d's Gloo (CMake found the gloo headers); "" when it was,
/// else why not.
std::string unavailable_reason();
bool available();
/// Whether NCCL (CUDA) is compiled in.
bool nccl_available();

/// Resolves "auto" for `device`; errors: ConfigError for an unknown name, "nccl" without CUDA/NCCL.
std::string resolve_backend(const std::string& backend, const c10::Device& device);

/// A pending asynchronous collective.
class Work {
 public:
  virtual ~Work() = default;
  /// Blocks until done. Errors: CommunicationError (a peer failed, or the timeout passed).
  virtual void wait() = 0;
};

/// The processes of one data-parallel run. All collectives must be called by every rank in the same
/// order (c10d's rule).
class ProcessGroup {
 public:
  /// Rendezvous at env.master_addr:master_port and connects every rank. Errors: ConfigError (backend),
  /// CommunicationError (the store or a peer cannot be reached within the timeout), Error when built
  /// without distributed support (unavailable_reason()).
  static std::shared_ptr<ProcessGroup> create(const Environment& env, const ProcessGroupOptions& options);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int world_size() const;
  const std::string& backend() const;
  const c10::Device& device() const;
  std::chrono::seconds timeout() const;

  /// Sums `tensor` over the ranks in place (every rank gets the same bits), asynchronously.
  std::unique_ptr<Work> allreduce_sum_async(at::Tensor tensor);
  /// Exchanges equal slices (c10d's alltoall_base): `input` (contiguous, length divisible by the world
  /// size) is cut into world_size slices, slice r goes to rank r; `output` (same length and dtype) receives
  /// rank r's slice for this rank at slice r. Any dtype the backend moves (bytes always), asynchronously.
  std::unique_ptr<Work> alltoall_async(at::Tensor output, at::Tensor input);
  /// Copies rank `root`'s `tensor` (contiguous) into every rank's, asynchronously.
  std::unique_ptr<Work> broadcast_async(at::Tensor tensor, int root);
  /// Sums the values over the ranks (blocking).
  std::vector<double> allreduce_sum(const std::vector<double>& values);
  /// Copies rank `root`'s tensors into every rank's (blocking; same shapes everywhere).
  void broadcast(std::vector<at::Tensor> tensors, int root = 0);
  void barrier();
  /// Rank `root`'s `text` on every rank (blocking; each rank passes its own, only root's is sent).
  std::string broadcast_text(const std::string& text, int root = 0);

  /// Turns an exception from a collective into a CommunicationError naming this rank, the operation
  /// and the failed peer (asks the store which ranks are still there: each live rank that failed
  /// reports itself within a few seconds); marks the group failed (its destructor then does not wait
  /// for the collectives still queued).
  [[noreturn]] void fail(const std::string& operation, const std::exception& cause);

 private:
  struct Impl;
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace torchfit::distributed
