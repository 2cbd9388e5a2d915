#include <torchfit/runtime/interrupt.h>

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <ctime>

namespace torchfit::runtime {
namespace {
std::atomic<int> g_interrupts{0};
std::atomic<int64_t> g_first_ns{0};  // CLOCK_MONOTONIC time of the first interrupt

int64_t monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

extern "C" void on_sigint(int) {
  const int64_t now = monotonic_ns();
  if (g_interrupts.load() >= 1) {
    // The same Ctrl-C delivered twice: a terminal signals a launcher (torchrun) and its workers, and the
    // launcher forwards the signal again a moment later.
    if (now - g_first_ns.load() < kSameInterruptWindowMs * 1000000) return;
    static const char msg[] = "\nSecond interrupt: exiting now.\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(130);
  }
  g_first_ns.store(now);
  g_interrupts.store(1);
  static const char msg[] = "\nInterrupt: stopping after the current step (Ctrl-C again to exit now).\n";
  (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
}
}  // namespace

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
}

bool interrupt_requested() { return g_interrupts.load() > 0; }
void request_interrupt() {
  g_first_ns.store(monotonic_ns());
  g_interrupts.store(1);
}
void clear_interrupt() { g_interrupts.store(0); }

}  // namespace torchfit::runtime
