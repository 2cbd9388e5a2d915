#include <torchfit/distributed/process_group.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <thread>

#include <torchfit/runtime/logging.h>

#ifdef TORCHFIT_WITH_DISTRIBUTED
#include "../compat/c10d.h"
#endif

namespace torchfit::distributed {

std::string unavailable_reason() {
#ifdef TORCHFIT_WITH_DISTRIBUTED
  return "";
#else
  return "this torchfit was built without distributed training: CMake did not find the gloo headers or c10d's "
         "ProcessGroupGloo.hpp (apt-get install libgloo-dev, then reconfigure)";
#endif
}

bool available() { return unavailable_reason().empty(); }

bool nccl_available() {
#if defined(TORCHFIT_WITH_DISTRIBUTED) && defined(TORCHFIT_WITH_NCCL)
  return true;
#else
  return false;
#endif
}

std::string resolve_backend(const std::string& backend, const c10::Device& device) {
  if (backend == "auto") return device.is_cuda() && nccl_available() ? "nccl" : "gloo";
  if (backend == "gloo") return backend;
  if (backend == "nccl") {
    if (!nccl_available()) throw ConfigError("backend \"nccl\": this torchfit was built without NCCL (CPU LibTorch)");
    if (!device.is_cuda()) throw ConfigError("backend \"nccl\" needs a CUDA device, got " + device.str());
    return backend;
  }
  throw ConfigError("distributed backend must be auto, gloo or nccl, got \"" + backend + "\"");
}

namespace {

// The local address this machine uses to reach `host` (a UDP socket "connected" there sends nothing):
// the interface Gloo must listen on so that the peers reach it. Empty when it cannot be told.
std::string local_address_towards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found) return "";
  std::string address;
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof local;
    char text[INET_ADDRSTRLEN] = {};
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        inet_ntop(AF_INET, &local.sin_addr, text, sizeof text))
      address = text;
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return address;
}

}  // namespace

#ifdef TORCHFIT_WITH_DISTRIBUTED

struct ProcessGroup::Impl {
  Environment env;
  ProcessGroupOptions options;
  std::string backend;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<compat::CollectiveBackend> collectives;
  bool failed = false;

  std::string missing_peers();
};

namespace {

std::string where(const Environment& env) {
  return "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size);
}

c10::intrusive_ptr<c10d::Store> make_store(const Environment& env, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions o;
  o.port = static_cast<std::uint16_t>(env.master_port);
  o.isServer = !env.agent_store && env.rank == 0;  // torchrun --standalone / by hand: rank 0 hosts it
  o.numWorkers = static_cast<std::size_t>(env.world_size);
  o.waitWorkers = !env.agent_store;
  o.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store = compat::make_tcp_store(env.master_addr, o);
  if (env.agent_store) store = c10::make_intrusive<c10d::PrefixStore>(env.store_prefix(), store);
  return c10::make_intrusive<c10d::PrefixStore>("torchfit", store);
}

// Gloo's network device. C++ Gloo does not read GLOO_SOCKET_IFNAME as Python does: honour it here, else
// listen on the address that routes to MASTER_ADDR (loopback for a local run).
std::shared_ptr<::gloo::transport::Device> gloo_device(const Environment& env) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    std::string first(ifname);
    first = first.substr(0, first.find(','));
    return c10d::ProcessGroupGloo::createDeviceForInterface(first);
  }
  const std::string address = local_address_towards(env.master_addr, env.master_port);
  if (address.empty()) return c10d::ProcessGroupGloo::createDefaultDevice();
  return c10d::ProcessGroupGloo::createDeviceForHostname(address);
}

c10::intrusive_ptr<compat::CollectiveBackend> make_collectives(const std::string& backend,
                                                               const c10::intrusive_ptr<c10d::Store>& store,
                                                               const Environment& env,
                                                               std::chrono::milliseconds timeout) {
#ifdef TORCHFIT_WITH_NCCL
  if (backend == "nccl") {
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, compat::nccl_options(timeout));
  }
#endif
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  options->devices.push_back(gloo_device(env));
  options->threads = 2;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
}

// Runs `body` on its own thread and waits at most `limit`: c10d's TCPStore client blocks without a limit
// when something listens on MASTER_PORT but never answers (a leftover process). Returns false when the
// limit passed; the thread is then left blocked (detached) and the caller fails. Exceptions of `body`
// are rethrown.
bool run_within(const std::function<void()>& body, std::chrono::milliseconds limit) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> result = done->get_future();
  std::thread([body, done] {
    try {
      body();
      done->set_value();
    } catch (...) {
      done->set_exception(std::current_exception());
    }
  }).detach();
  if (result.wait_for(limit) != std::future_status::ready) return false;
  result.get();
  return true;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

}  // namespace

std::shared_ptr<ProcessGroup> ProcessGroup::create(const Environment& env, const ProcessGroupOptions& options) {
  auto impl = std::make_shared<Impl>();  // shared with the joining thread, which may outlive this call
  impl->env = env;
  impl->options = options;
  impl->backend = resolve_backend(options.backend, options.device);
  const std::chrono::milliseconds timeout = options.timeout;
  const std::string store_text = "MASTER_ADDR:MASTER_PORT " + env.master_addr + ":" + std::to_string(env.master_port);
  const std::string what = where(env) + ": cannot join the " + impl->backend + " process group through the store at " +
                           store_text + (env.agent_store ? " (torchrun's)" : "");
  const auto start = std::chrono::steady_clock::now();
  try {
    const bool joined = run_within(
        [impl, env, timeout] {
          impl->store = make_store(env, timeout);
          impl->collectives = make_collectives(impl->backend, impl->store, env, timeout);
        },
        timeout);
    if (!joined) {
      throw CommunicationError(what + ": no answer within " + std::to_string(options.timeout.count()) +
                               " s (ProcessGroupOptions::timeout): is another process listening on port " +
                               std::to_string(env.master_port) + " (a leftover run), or is rank 0 not started?");
    }
  } catch (const CommunicationError&) {
    throw;
  } catch (const std::exception& e) {
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    throw CommunicationError(what + ": failed after " + seconds_text(took) + " s (ProcessGroupOptions::timeout " +
                             std::to_string(options.timeout.count()) + " s): " + e.what());
  }
  auto owned = std::make_unique<Impl>(std::move(*impl));
  torchfit::logger().info("distributed: {} joined the {} group via {} (timeout {} s)", where(env), owned->backend,
                          store_text, options.timeout.count());
  return std::shared_ptr<ProcessGroup>(new ProcessGroup(std::move(owned)));
}

ProcessGroup::~ProcessGroup() {
  // After a failure c10d's destructor would wait for the collectives still queued: leave them.
  if (impl_ && impl_->failed) (void)impl_->collectives.release();
}

namespace {
// Which ranks did not report a failure in the store within 3 s (see missing_peers).
std::string peers_from_store(const c10::intrusive_ptr<c10d::Store>& store, const Environment& e) {
  try {
    store->set("failed/" + std::to_string(e.rank), std::vector<uint8_t>{1});
    std::vector<bool> seen(static_cast<size_t>(e.world_size), false);
    seen[static_cast<size_t>(e.rank)] = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (;;) {
      std::string missing;
      for (int r = 0; r < e.world_size; ++r) {
        if (!seen[static_cast<size_t>(r)]) seen[static_cast<size_t>(r)] = store->check({"failed/" + std::to_string(r)});
        if (!seen[static_cast<size_t>(r)]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      if (missing.empty()) return "every rank reported the failure (a network problem or a timeout)";
      if (std::chrono::steady_clock::now() > deadline) {
        return "failed peer: rank " + missing + " (it did not report within 3 s: killed, crashed or stuck)";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  } catch (const std::exception&) {
    if (e.agent_store) return "torchrun's store is unreachable too (the launcher stopped)";
    return "failed peer: rank 0 (it hosted the store at " + e.master_addr + ":" + std::to_string(e.master_port) +
           ", which is gone)";
  }
}

}  // namespace

std::string ProcessGroup::Impl::missing_peers() {
  // Store operations too end within the timeout (at most 10 s here: this only words the error).
  auto peers = std::make_shared<std::string>();
  const auto limit = std::min<std::chrono::milliseconds>(options.timeout, std::chrono::seconds(10));
  const bool answered = run_within([peers, store = store, e = env] { *peers = peers_from_store(store, e); }, limit);
  if (answered) return *peers;
  return "the store at MASTER_ADDR:MASTER_PORT " + env.master_addr + ":" + std::to_string(env.master_port) +
         " did not answer within " + std::to_string(limit.count() / 1000) + " s";
}

void ProcessGroup::fail(const std::string& operation, const std::exception& cause) {
  impl_->failed = true;
  const std::string peers = impl_->missing_peers();
  throw CommunicationError("distributed: " + where(impl_->env) + ": " + operation + " failed: " + peers +
                           ". Cause: " + cause.what());
}

namespace {

class C10dWork : public Work {
 public:
  C10dWork(c10::intrusive_ptr<c10d::Work> work, ProcessGroup* group, const char* operation)
      : work_(std::move(work)), group_(group), operation_(operation) {}
  void wait() override {
    try {
      work_->wait();
    } catch (const std::exception& e) {
      group_->fail(operation_, e);
    }
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  ProcessGroup* group_;
  const char* operation_;
};

}  // namespace

std::unique_ptr<Work> ProcessGroup::allreduce_sum_async(at::Tensor tensor) {
  std::vector<at::Tensor> tensors{std::move(tensor)};
  c10d::AllreduceOptions o;
  o.reduceOp = c10d::ReduceOp::SUM;  // Gloo refuses AVG: callers scale
  try {
    return std::make_unique<C10dWork>(impl_->collectives->allreduce(tensors, o), this, "allreduce");
  } catch (const std::exception& e) {
    fail("allreduce", e);
  }
}

std::unique_ptr<Work> ProcessGroup::alltoall_async(at::Tensor output, at::Tensor input) {
  std::vector<int64_t> equal_splits;  // empty: world_size equal slices
  c10d::AllToAllOptions o;
  try {
    return std::make_unique<C10dWork>(impl_->collectives->alltoall_base(output, input, equal_splits, equal_splits, o),
                                      this, "alltoall");
  } catch (const std::exception& e) {
    fail("alltoall", e);
  }
}

std::unique_ptr<Work> ProcessGroup::broadcast_async(at::Tensor tensor, int root) {
  std::vector<at::Tensor> one{std::move(tensor)};
  c10d::BroadcastOptions o;
  o.rootRank = root;
  try {
    return std::make_unique<C10dWork>(impl_->collectives->broadcast(one, o), this, "broadcast");
  } catch (const std::exception& e) {
    fail("broadcast", e);
  }
}

std::vector<double> ProcessGroup::allreduce_sum(const std::vector<double>& values) {
  at::Tensor t = at::tensor(at::ArrayRef<double>(values), at::kDouble).to(impl_->options.device);
  allreduce_sum_async(t)->wait();
  t = t.cpu();
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
}

void ProcessGroup::broadcast(std::vector<at::Tensor> tensors, int root) {
  c10d::BroadcastOptions o;
  o.rootRank = root;
  try {
    for (auto& t : tensors) {
      std::vector<at::Tensor> one{t.is_contiguous() ? t : t.contiguous()};
      impl_->collectives->broadcast(one, o)->wait();
      if (!one[0].is_same(t)) t.copy_(one[0]);
    }
  } catch (const std::exception& e) {
    fail("broadcast", e);
  }
}

std::string ProcessGroup::broadcast_text(const std::string& text, int root) {
  at::Tensor size = at::full({1}, static_cast<double>(text.size()), at::kDouble).to(impl_->options.device);
  broadcast({size}, root);
  const auto n = static_cast<int64_t>(size.cpu().item<double>());
  at::Tensor bytes = at::zeros({std::max<int64_t>(n, 1)}, at::kByte);
  if (rank() == root) std::copy(text.begin(), text.end(), bytes.data_ptr<uint8_t>());
  bytes = bytes.to(impl_->options.device);
  broadcast({bytes}, root);
  bytes = bytes.cpu();
  return std::string(reinterpret_cast<const char*>(bytes.data_ptr<uint8_t>()), static_cast<size_t>(n));
}

void ProcessGroup::barrier() {
  try {
    impl_->collectives->barrier()->wait();
  } catch (const std::exception& e) {
    fail("barrier", e);
  }
}

#else  // built without c10d's Gloo: no group can be made

struct ProcessGroup::Impl {
  Environment env;
  ProcessGroupOptions options;
  std::string backend;
};

std::shared_ptr<ProcessGroup> ProcessGroup::create(const Environment&, const ProcessGroupOptions&) {
  (void)local_address_towards;
  throw Error(unavailable_reason());
}

ProcessGroup::~ProcessGroup() = default;
void ProcessGroup::fail(const std::string& operation, const std::exception& cause) {
  throw CommunicationError(operation + ": " + cause.what());
}
std::unique_ptr<Work> ProcessGroup::allreduce_sum_async(at::Tensor) { throw Error(unavailable_reason()); }
std::unique_ptr<Work> ProcessGroup::alltoall_async(at::Tensor, at::Tensor) { throw Error(unavailable_reason()); }
std::unique_ptr<Work> ProcessGroup::broadcast_async(at::Tensor, int) { throw Error(unavailable_reason()); }
std::vector<double> ProcessGroup::allreduce_sum(const std::vector<double>&) { throw Error(unavailable_reason()); }
void ProcessGroup::broadcast(std::vector<at::Tensor>, int) { throw Error(unavailable_reason()); }
void ProcessGroup::barrier() { throw Error(unavailable_reason()); }
std::string ProcessGroup::broadcast_text(const std::string&, int) { throw Error(unavailable_reason()); }

#endif

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
int ProcessGroup::rank() const { return impl_->env.rank; }
int ProcessGroup::world_size() const { return impl_->env.world_size; }
const std::string& ProcessGroup::backend() const { return impl_->backend; }
const c10::Device& ProcessGroup::device() const { return impl_->options.device; }
std::chrono::seconds ProcessGroup::timeout() const { return impl_->options.timeout; }

}  // namespace torchfit::distributed
