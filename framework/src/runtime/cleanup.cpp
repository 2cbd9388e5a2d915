#include <torchfit/runtime/cleanup.h>

#include <unistd.h>

#include <atomic>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>

namespace torchfit::runtime {
namespace {

// A fixed table (no allocation, no locks) so that a signal handler can walk it.
struct TemporarySlot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 registered
  char path[PATH_MAX + 1] = {};
};
TemporarySlot g_slots[TemporaryFile::kMaxTemporaries];

std::terminate_handler g_previous_terminate = nullptr;

[[noreturn]] void terminate_with_cleanup() {
  remove_registered_temporaries();
  if (g_previous_terminate) g_previous_terminate();
  std::abort();
}

extern "C" void on_fatal_signal(int signo) {
  remove_registered_temporaries();
  ::signal(signo, SIG_DFL);  // SA_RESETHAND did it already; kept for clarity
  ::raise(signo);
}

extern "C" void cleanup_at_exit() { remove_registered_temporaries(); }

}  // namespace

TemporaryFile::TemporaryFile(const std::string& path) {
  if (path.size() > PATH_MAX) return;
  for (int i = 0; i < kMaxTemporaries; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(2);
    slot_ = i;
    return;
  }
}

TemporaryFile::~TemporaryFile() {
  if (slot_ >= 0) g_slots[slot_].state.store(0);
}

void remove_registered_temporaries() noexcept {
  for (auto& slot : g_slots) {
    if (slot.state.load() == 2) ::unlink(slot.path);
  }
}

void install_exit_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit(cleanup_at_exit);
    g_previous_terminate = std::set_terminate(terminate_with_cleanup);
    // A file-size limit (ulimit -f, a batch system's RLIMIT_FSIZE) would kill the process with SIGXFSZ in the
    // middle of a write; ignored, the write fails with EFBIG and takes the path of a full disk instead (the
    // error names the file, the temporary is removed, run.json says "failed").
    struct sigaction xfsz {};
    if (::sigaction(SIGXFSZ, nullptr, &xfsz) == 0 && xfsz.sa_handler == SIG_DFL) ::signal(SIGXFSZ, SIG_IGN);
    for (const int signo : {SIGTERM, SIGHUP, SIGINT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
      struct sigaction current {};
      if (::sigaction(signo, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = on_fatal_signal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESETHAND | SA_NODEFER;
      ::sigaction(signo, &sa, nullptr);
    }
  });
}

}  // namespace torchfit::runtime
