// Batch memory pool, batch assembly for sample-indexed sources, and the worker ring that prefetches
// batches in order.
#include <torchfit/data/prefetch_ring.h>
#include <torchfit/data/random.h>
#include <torchfit/error.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <system_error>

namespace torchfit::data {

BatchBufferPool::BatchBufferPool(size_t bytes, size_t keep) : bytes_((bytes + 63) / 64 * 64), keep_(keep) {}

BatchBufferPool::~BatchBufferPool() {
  for (void* p : idle_) std::free(p);
}

at::Tensor BatchBufferPool::tensor(at::IntArrayRef sizes) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel < 0 || static_cast<size_t>(numel) * sizeof(float) > bytes_)
    throw std::invalid_argument("BatchBufferPool: a tensor of " + std::to_string(numel) +
                                " floats does not fit a buffer of " + std::to_string(bytes_) + " bytes");
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lk(mutex_);
    if (!idle_.empty()) p = idle_.back(), idle_.pop_back();
  }
  if (!p) p = std::aligned_alloc(64, std::max<size_t>(bytes_, 64));
  if (!p) throw std::bad_alloc();
  auto self = shared_from_this();
  return at::from_blob(
      p, sizes, [self](void* q) { self->give_back(q); }, at::TensorOptions().dtype(at::kFloat));
}

size_t BatchBufferPool::idle() const {
  std::lock_guard<std::mutex> lk(mutex_);
  return idle_.size();
}

void BatchBufferPool::give_back(void* p) {
  {
    std::lock_guard<std::mutex> lk(mutex_);
    if (idle_.size() < keep_) return idle_.push_back(p);
  }
  std::free(p);
}

BatchAssembler::BatchAssembler(int64_t samples, int64_t batch_size, std::array<int64_t, 3> sample_shape, bool shuffle,
                               uint64_t seed, size_t keep_buffers)
    : samples_(samples), batch_size_(batch_size), shape_(sample_shape), shuffle_(shuffle), seed_(seed) {
  if (samples < 0) throw ConfigError("BatchAssembler: samples must be >= 0, got " + std::to_string(samples));
  if (batch_size < 1) throw ConfigError("batch_size must be >= 1, got " + std::to_string(batch_size));
  if (shape_[0] < 1 || shape_[1] < 1 || shape_[2] < 1)
    throw ConfigError("BatchAssembler: the sample shape (C, H, W) must be positive, got (" + std::to_string(shape_[0]) +
                      ", " + std::to_string(shape_[1]) + ", " + std::to_string(shape_[2]) + ")");
  const int64_t per_batch = batch_size * shape_[0] * shape_[1] * shape_[2];
  buffers_ = std::make_shared<BatchBufferPool>(static_cast<size_t>(per_batch) * sizeof(float), keep_buffers);
}

BatchAssembler::BatchAssembler(int64_t samples, int64_t batch_size, std::array<int64_t, 3> sample_shape,
                               PassOrder pass_order, size_t keep_buffers)
    : BatchAssembler(samples, batch_size, sample_shape, false, 0, keep_buffers) {
  if (!pass_order) throw ConfigError("BatchAssembler: the pass order function is empty");
  pass_order_ = std::move(pass_order);
}

std::shared_ptr<const std::vector<int64_t>> BatchAssembler::order(int64_t pass) {
  std::lock_guard<std::mutex> lk(order_mutex_);
  auto it = orders_.find(pass);
  if (it != orders_.end()) return it->second;
  auto order = std::make_shared<const std::vector<int64_t>>(pass_order_ ? pass_order_(pass)
                                                                        : pass_order(samples_, shuffle_, seed_, pass));
  orders_[pass] = order;
  while (orders_.size() > 4) orders_.erase(orders_.begin());  // threads hold shared_ptrs to what they use
  return order;
}

void BatchAssembler::forget_orders() {
  std::lock_guard<std::mutex> lk(order_mutex_);
  orders_.clear();
}

Batch BatchAssembler::assemble(int64_t pass, int64_t batch_index, int64_t shard_rank, int64_t shard_count, bool pinned,
                               const FillSample& fill, const std::atomic<bool>* stop) {
  const auto order = this->order(pass);
  const int64_t start = batch_index * batch_size_;
  const int64_t end = std::min(samples_, start + batch_size_);
  const auto [lo, hi] = shard_bounds(end - start, shard_rank, shard_count);  // data-parallel: this rank's part
  const int64_t m = hi - lo;
  const auto [C, H, W] = shape_;
  Batch b;
  // Pinned batches (CUDA fits) come from LibTorch's caching pinned-memory allocator, itself a pool.
  b.x = pinned ? at::empty({m, C, H, W}, at::TensorOptions().dtype(at::kFloat).pinned_memory(true))
               : buffers_->tensor({m, C, H, W});
  b.indices.resize(static_cast<size_t>(m));
  float* x = b.x.data_ptr<float>();
  const int64_t per = C * H * W;
  for (int64_t i = 0; i < m; ++i) {
    if (stop && stop->load(std::memory_order_relaxed)) return b;
    const int64_t position = start + lo + i;
    const int64_t idx = (*order)[static_cast<size_t>(position)];
    b.indices[static_cast<size_t>(i)] = idx;
    fill(idx, pass, position, x + i * per);  // randomness keyed by the pass position
  }
  if (shard_count > 1) b.global_size = std::max<int64_t>(0, end - start);
  return b;
}

PrefetchRing::PrefetchRing(MakeBatch make, int64_t workers, int64_t max_queue_size)
    : make_(std::move(make)), workers_option_(workers), threads_count_(workers), queue_(max_queue_size) {
  if (max_queue_size < 1) throw ConfigError("max_queue_size must be >= 1, got " + std::to_string(max_queue_size));
  if (workers < 0 || workers > kMaxWorkers)
    throw ConfigError("workers must be in [0, " + std::to_string(kMaxWorkers) + "] (0 = all cores), got " +
                      std::to_string(workers));
  if (threads_count_ == 0) threads_count_ = std::max<unsigned>(1, std::thread::hardware_concurrency());
}

PrefetchRing::~PrefetchRing() { stop(); }

void PrefetchRing::start() {
  if (!threads_.empty()) return;
  stop_ = false;
  slots_.assign(static_cast<size_t>(queue_), Slot{});
  for (int64_t i = 0; i < threads_count_; ++i) {
    try {
      threads_.emplace_back(&PrefetchRing::worker_loop, this);
    } catch (const std::system_error& e) {
      stop();
      throw IoError("cannot start loader thread " + std::to_string(i + 1) + " of " + std::to_string(threads_count_) +
                    " (workers=" + std::to_string(workers_option_) + "): " + e.what());
    }
  }
}

void PrefetchRing::stop() {
  {
    std::lock_guard<std::mutex> lk(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
  stop_ = false;
}

void PrefetchRing::seek(int64_t position) {
  if (position < 0) throw IndexError("PrefetchRing: position must be >= 0, got " + std::to_string(position));
  stop();
  std::lock_guard<std::mutex> lk(mutex_);
  consumed_ = position;
  next_job_ = position;
  slots_.clear();
}

int64_t PrefetchRing::position() const {
  std::lock_guard<std::mutex> lk(mutex_);
  return consumed_;
}

void PrefetchRing::worker_loop() {
  for (;;) {
    int64_t job;
    {
      std::unique_lock<std::mutex> lk(mutex_);
      cv_.wait(lk, [&] { return stop_.load() || next_job_ < consumed_ + queue_; });
      if (stop_) return;
      job = next_job_++;
    }
    Batch batch;
    std::exception_ptr error;
    try {
      batch = make_(job);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lk(mutex_);
      if (stop_) return;
      Slot& s = slots_[static_cast<size_t>(job % queue_)];
      s.job = job;
      s.ready = true;
      s.batch = std::move(batch);
      s.error = error;
    }
    cv_.notify_all();
  }
}

Batch PrefetchRing::next() {
  start();
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lk(mutex_);
  const int64_t job = consumed_;
  Slot& s = slots_[static_cast<size_t>(job % queue_)];
  cv_.wait(lk, [&] { return s.ready && s.job == job; });
  Batch b = std::move(s.batch);
  std::exception_ptr error = s.error;
  s = Slot{};
  ++consumed_;
  lk.unlock();
  cv_.notify_all();
  if (error) std::rethrow_exception(error);
  b.wait_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

}  // namespace torchfit::data
