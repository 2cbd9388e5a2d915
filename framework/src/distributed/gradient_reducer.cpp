#include <torchfit/distributed/gradient_reducer.h>

#include <chrono>
#include <mutex>

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <torchfit/distributed/process_group.h>
#include <torchfit/error.h>

#include "gradient_compression.h"

namespace torchfit::distributed {

GradientCompression parse_gradient_compression(const std::string& name, const std::string& what) {
  for (auto c : {GradientCompression::none, GradientCompression::bf16, GradientCompression::fp16}) {
    if (name == to_string(c)) return c;
  }
  throw ConfigError(what + " '" + name + "' is not one of none, bf16, fp16");
}

std::string to_string(GradientCompression compression) {
  switch (compression) {
    case GradientCompression::bf16:
      return "bf16";
    case GradientCompression::fp16:
      return "fp16";
    default:
      return "none";
  }
}

struct GradientReducer::Impl {
  struct Bucket {
    int64_t offset = 0;  // elements into the flat buffer
    int64_t numel = 0;
    int parameters = 0;  // parameters whose gradients it holds
    int pending = 0;     // of those, not yet accumulated this step
    std::unique_ptr<Work> work;
    // Compressed only: 16-bit patterns as bytes, world_size slices of `slice` elements each. `sent`
    // holds this rank's compressed gradient, then (slice r) rank r's reduced slice; `received` slice r
    // is rank r's values of this rank's slice.
    at::Tensor sent, received;
    int64_t slice = 0;
    std::vector<std::unique_ptr<Work>> gathers;
  };
  struct Hook {
    std::shared_ptr<torch::autograd::Node> accumulator;  // kept alive: the tensor holds it weakly
    uintptr_t key = 0;
  };

  std::shared_ptr<ProcessGroup> group;
  std::vector<at::Tensor> parameters;
  std::vector<size_t> bucket_of;  // parameter → bucket
  std::vector<Bucket> buckets;
  at::Tensor flat;
  size_t next = 0;  // the next bucket to start: buckets start in order, the same on every rank
  std::mutex mutex;
  std::vector<Hook> hooks;
  GradientCompression compression = GradientCompression::none;

  void layout(int64_t bucket_bytes);
  void allocate_compressed();
  void start(Bucket& b);
  void finish_compressed(Bucket& b);
  void hook(size_t index, const std::shared_ptr<Impl>& self);
  void ready(size_t index);
  void start_ready();  // with the mutex held
};

// Backward produces the last layer's gradients first: the buffer holds the parameters in reverse order,
// cut into buckets of about bucket_bytes, so bucket 0 completes first.
void GradientReducer::Impl::layout(int64_t bucket_bytes) {
  const auto options = parameters.front().options();
  int64_t total = 0;
  for (const auto& p : parameters) {
    if (p.scalar_type() != options.dtype().toScalarType() || p.device() != options.device()) {
      throw ConfigError("GradientReducer: every parameter must have the first one's dtype and device (" +
                        std::string(c10::toString(p.scalar_type())) + " on " + p.device().str() + ")");
    }
    total += p.numel();
  }
  flat = at::zeros({total}, options);
  bucket_of.assign(parameters.size(), 0);
  int64_t offset = 0;
  const int64_t element = static_cast<int64_t>(flat.element_size());
  for (size_t k = parameters.size(); k-- > 0;) {
    at::Tensor& p = parameters[k];
    if (buckets.empty() || buckets.back().numel * element >= bucket_bytes) {
      buckets.emplace_back();
      buckets.back().offset = offset;
    }
    Bucket& b = buckets.back();
    p.mutable_grad() = flat.narrow(0, offset, p.numel()).view(p.sizes());
    b.numel += p.numel();
    ++b.parameters;
    bucket_of[k] = buckets.size() - 1;
    offset += p.numel();
  }
}

void GradientReducer::Impl::hook(size_t index, const std::shared_ptr<Impl>& self) {
  auto accumulator = torch::autograd::impl::grad_accumulator(parameters[index]);
  if (!accumulator) throw ConfigError("GradientReducer: a parameter is not a leaf that requires grad");
  std::weak_ptr<Impl> weak = self;
  auto fn = [weak, index](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
    if (auto impl = weak.lock()) impl->ready(index);
    return outputs;
  };
  const uintptr_t key =
      accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(std::move(fn)));
  hooks.push_back(Hook{std::move(accumulator), key});
}

void GradientReducer::Impl::ready(size_t index) {
  std::lock_guard<std::mutex> lock(mutex);
  Bucket& b = buckets[bucket_of[index]];
  if (b.pending > 0) --b.pending;
  start_ready();
}

void GradientReducer::Impl::start_ready() {
  while (next < buckets.size() && buckets[next].pending == 0) start(buckets[next++]);
}

void GradientReducer::Impl::allocate_compressed() {
  if (!flat.device().is_cpu() || flat.scalar_type() != at::kFloat) {
    throw ConfigError("GradientReducer: gradient compression " + to_string(compression) +
                      " needs float32 gradients on the CPU (Gloo), these are " +
                      std::string(c10::toString(flat.scalar_type())) + " on " + flat.device().str());
  }
  const int64_t ranks = group->world_size();
  for (auto& b : buckets) {
    b.slice = (b.numel + ranks - 1) / ranks;
    b.sent = at::zeros({2 * ranks * b.slice}, at::kByte);  // the padding stays zero
    b.received = at::empty({2 * ranks * b.slice}, at::kByte);
  }
}

// Uncompressed: the float32 allreduce. Compressed: the gradient rounded into `sent`, whose slices go to
// their owners (the reduce-scatter half).
void GradientReducer::Impl::start(Bucket& b) {
  at::Tensor values = flat.narrow(0, b.offset, b.numel);
  if (compression == GradientCompression::none) {
    b.work = group->allreduce_sum_async(values);
    return;
  }
  compression::compress(compression, values.data_ptr<float>(), reinterpret_cast<uint16_t*>(b.sent.data_ptr()), b.numel);
  b.work = group->alltoall_async(b.received, b.sent);
}

// Compressed, after the alltoall: this rank sums its slice, every owner broadcasts its reduced slice
// (the all-gather half), and the whole bucket is cast back into the float32 gradient.
void GradientReducer::Impl::finish_compressed(Bucket& b) {
  const int ranks = group->world_size(), rank = group->rank();
  auto* sent = reinterpret_cast<uint16_t*>(b.sent.data_ptr());
  compression::reduce(compression, reinterpret_cast<const uint16_t*>(b.received.data_ptr()), b.slice, ranks,
                      sent + rank * b.slice, b.slice);
  for (int r = 0; r < ranks; ++r)
    b.gathers.push_back(group->broadcast_async(b.sent.narrow(0, 2 * r * b.slice, 2 * b.slice), r));
}

GradientReducer::GradientReducer(std::shared_ptr<ProcessGroup> group, std::vector<at::Tensor> parameters,
                                 GradientReducerOptions options)
    : impl_(std::make_shared<Impl>()) {
  if (!group) throw ConfigError("GradientReducer: no process group");
  if (options.bucket_bytes <= 0) throw ConfigError("GradientReducer: bucket_bytes must be > 0");
  impl_->group = std::move(group);
  impl_->compression = options.compression;
  for (auto& p : parameters)
    if (p.requires_grad()) impl_->parameters.push_back(p);
  if (impl_->parameters.empty()) throw ConfigError("GradientReducer: the model has no trainable parameters");
  impl_->layout(options.bucket_bytes);
  if (impl_->compression != GradientCompression::none) impl_->allocate_compressed();
  for (size_t i = 0; i < impl_->parameters.size(); ++i) impl_->hook(i, impl_);
  zero_grad();
}

GradientReducer::~GradientReducer() {
  for (auto& h : impl_->hooks) h.accumulator->del_post_hook(h.key);
}

void GradientReducer::zero_grad() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->flat.zero_();
  for (auto& b : impl_->buckets) {
    b.pending = b.parameters;
    b.work.reset();
    b.gathers.clear();
  }
  impl_->next = 0;
}

double GradientReducer::finish() {
  const auto t0 = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  for (auto& b : impl_->buckets) b.pending = 0;  // parameters that got no gradient this step: zeros
  impl_->start_ready();
  for (auto& b : impl_->buckets) {
    b.work->wait();
    b.work.reset();
    if (impl_->compression != GradientCompression::none) impl_->finish_compressed(b);
  }
  for (auto& b : impl_->buckets) {
    if (b.gathers.empty()) continue;
    for (auto& w : b.gathers) w->wait();
    b.gathers.clear();
    compression::decompress(impl_->compression, reinterpret_cast<const uint16_t*>(b.sent.data_ptr()),
                            impl_->flat.data_ptr<float>() + b.offset, b.numel);
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int64_t GradientReducer::wire_bytes() const {
  if (impl_->compression == GradientCompression::none) return bytes();
  int64_t total = 0;
  for (const auto& b : impl_->buckets) total += b.sent.numel();
  return total;
}

GradientCompression GradientReducer::compression() const { return impl_->compression; }

int64_t GradientReducer::buckets() const { return static_cast<int64_t>(impl_->buckets.size()); }

int64_t GradientReducer::bytes() const {
  return impl_->flat.numel() * static_cast<int64_t>(impl_->flat.element_size());
}

}  // namespace torchfit::distributed
