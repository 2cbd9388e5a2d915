#pragma once
/// @file prefetch_ring.h
/// The machinery that gets batches ready ahead of the trainer, for any batch source: BatchBufferPool
/// (batch memory reused from batch to batch), BatchAssembler (one batch of a sample-indexed source:
/// the pass order, the data-parallel shard, x on a pooled buffer, one "fill sample i into this slot"
/// call per sample) and PrefetchRing (worker threads filling a bounded ring of batches handed out in
/// order). DirectoryIterator is built on them; Keras's counterpart is the Sequence + OrderedEnqueuer
/// behind fit(workers=…, max_queue_size=…), tf.data's `prefetch`.
#include <ATen/ATen.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <torchfit/data/batch_iterator.h>

namespace torchfit::data {

/// The most worker threads a PrefetchRing starts (FlowOptions::workers).
constexpr int64_t kMaxWorkers = 1024;

/// Buffers of one full batch each (`bytes` bytes, 64-byte aligned), handed out as float tensor storage
/// and taken back by the tensor's deleter when the tensor and every view of it are freed — so a long
/// run does not fault fresh pages in per batch (with two workers glibc unmapped and re-faulted its
/// per-thread heaps, which halved the loading rate). Locked once per batch, never per sample. At most
/// `keep` idle buffers are kept; more are freed. Create it with std::make_shared (the tensors share
/// ownership: the pool outlives the source while tensors hold it). The tensors do not own resizable
/// storage (resize_ throws); clone() one to get that.
class BatchBufferPool : public std::enable_shared_from_this<BatchBufferPool> {
 public:
  BatchBufferPool(size_t bytes, size_t keep);
  ~BatchBufferPool();
  BatchBufferPool(const BatchBufferPool&) = delete;
  BatchBufferPool& operator=(const BatchBufferPool&) = delete;
  /// A float32 tensor of `sizes` on a pooled buffer (uninitialised). Errors: std::invalid_argument when
  /// numel · 4 exceeds the buffer size; std::bad_alloc.
  at::Tensor tensor(at::IntArrayRef sizes);
  /// Idle buffers held now.
  size_t idle() const;

 private:
  void give_back(void* p);
  size_t bytes_, keep_;
  mutable std::mutex mutex_;
  std::vector<void*> idle_;
};

/// A source's work for one sample: write sample `index` — at `position` of pass `pass`, the key of its
/// random draws (sample_seed(seed, pass, position)) — as float32 (C, H, W) values into `out`, a slot of
/// C·H·W floats inside the batch's x. Called on the worker threads at once: it must be thread-safe.
using FillSample = std::function<void(int64_t index, int64_t pass, int64_t position, float* out)>;

/// One batch of a sample-indexed source, in passes of ceil(samples / batch_size) batches (the last one
/// partial): pass p visits the samples in pass_order(samples, shuffle, seed, p) (random.h); batch b of
/// it holds positions [b·batch_size, min(samples, (b+1)·batch_size)). Pass orders are computed once
/// and shared by the threads (the last 4 passes are kept). Thread-safe.
class BatchAssembler {
 public:
  /// `sample_shape` (C, H, W) of one sample; `keep_buffers` idle batch buffers the pool keeps (what the
  /// queue, the workers and the consumer hold at once, plus some slack). Errors: ConfigError when
  /// samples < 0, batch_size < 1 or a sample dimension < 1.
  BatchAssembler(int64_t samples, int64_t batch_size, std::array<int64_t, 3> sample_shape, bool shuffle, uint64_t seed,
                 size_t keep_buffers);
  /// The sample order of a pass (≥ 0): a permutation of 0 … samples−1.
  using PassOrder = std::function<std::vector<int64_t>(int64_t pass)>;
  /// As above, with pass orders from `pass_order` instead of pass_order(samples, shuffle, seed, p).
  /// Errors: as above; ConfigError when pass_order is empty.
  BatchAssembler(int64_t samples, int64_t batch_size, std::array<int64_t, 3> sample_shape, PassOrder pass_order,
                 size_t keep_buffers);
  /// The sample order of pass `pass` (≥ 0), shared.
  std::shared_ptr<const std::vector<int64_t>> order(int64_t pass);
  /// Batch `batch_index` of pass `pass`, shard `shard_rank` of `shard_count` (BatchIterator::shard;
  /// samples [m·rank/count, m·(rank+1)/count) of the batch's m): x float32 (n, C, H, W) with n this
  /// shard's samples — on a pooled buffer, or page-locked memory from LibTorch's pinned allocator when
  /// `pinned` — filled by one `fill` call per sample, in order; `indices` the sample indices;
  /// global_size m when shard_count > 1; y undefined (the source adds it). When `stop` (optional)
  /// becomes true the batch is returned at once, partly filled (a worker being stopped). The caller
  /// checks `batch_index` (0..batches_per_pass−1).
  Batch assemble(int64_t pass, int64_t batch_index, int64_t shard_rank, int64_t shard_count, bool pinned,
                 const FillSample& fill, const std::atomic<bool>* stop = nullptr);
  /// Drops the cached pass orders (a reset()).
  void forget_orders();
  int64_t samples() const { return samples_; }
  int64_t batch_size() const { return batch_size_; }

 private:
  int64_t samples_, batch_size_;
  std::array<int64_t, 3> shape_;
  bool shuffle_;
  uint64_t seed_;
  std::shared_ptr<BatchBufferPool> buffers_;
  PassOrder pass_order_;  // empty: pass_order(samples_, shuffle_, seed_, p)
  std::mutex order_mutex_;
  std::map<int64_t, std::shared_ptr<const std::vector<int64_t>>> orders_;
};

/// Worker threads that make batches "jobs" 0, 1, 2, … (a global batch counter: job j is batch j mod
/// batches_per_pass of pass j div batches_per_pass, as the source maps it) into a ring of
/// `max_queue_size` slots; next() hands them out in job order. Workers never run more than
/// max_queue_size jobs ahead of the consumer; the ring's lock is taken twice per batch, never per
/// sample. The threads start on the first next() (or start()); stop() (and the destructor, seek())
/// stops and joins them promptly: a `make` that checks stopping() returns mid-batch. A job's exception
/// is kept in its slot and rethrown by the next() that reaches it. Which batch a job gives does not
/// depend on the number of workers. One consumer thread calls next(), seek() and stop().
class PrefetchRing {
 public:
  /// Makes the batch of `job`; called on the worker threads at once (thread-safe).
  using MakeBatch = std::function<Batch(int64_t job)>;
  /// `workers` threads, 0..kMaxWorkers (0 = std::thread::hardware_concurrency()); `max_queue_size` ≥ 1
  /// batches ahead. Errors: ConfigError naming workers / max_queue_size.
  PrefetchRing(MakeBatch make, int64_t workers, int64_t max_queue_size);
  ~PrefetchRing();
  PrefetchRing(const PrefetchRing&) = delete;
  PrefetchRing& operator=(const PrefetchRing&) = delete;

  /// The batch of job position(), blocking until a worker has made it (Batch::wait_ms: how long);
  /// then position() + 1. Starts the workers when they are not running. Errors: rethrows the job's
  /// exception; IoError "cannot start loader thread i of n (workers=W): …" when the system refuses a
  /// thread (the threads already started are stopped).
  Batch next();
  /// Starts the workers (nothing when they run).
  void start();
  /// Whether the workers run.
  bool running() const { return !threads_.empty(); }
  /// Stops and joins the workers; prefetched batches stay in their slots (seek() drops them).
  void stop();
  /// Stops the workers, drops every prefetched batch and continues at job `position` (≥ 0).
  void seek(int64_t position);
  /// Jobs handed out by next() so far (the job the next next() returns).
  int64_t position() const;
  /// True while stop() is stopping the workers: a long `make` checks it and returns early.
  const std::atomic<bool>& stopping() const { return stop_; }
  /// The number of threads start() runs.
  int64_t threads() const { return threads_count_; }

 private:
  struct Slot {
    int64_t job = -1;
    bool ready = false;
    Batch batch;
    std::exception_ptr error;
  };
  void worker_loop();

  MakeBatch make_;
  int64_t workers_option_, threads_count_, queue_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
  int64_t next_job_ = 0;  // next job a worker will claim
  int64_t consumed_ = 0;  // jobs handed out by next()
  std::atomic<bool> stop_{false};
};

}  // namespace torchfit::data
