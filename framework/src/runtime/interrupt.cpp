#include <torchfit/runtime/interrupt.h>

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>

#include <torchfit/runtime/cleanup.h>

namespace torchfit::runtime {
namespace {
std::atomic<int> g_signal{0};        // the first interrupt's signal number, 0 = none
std::atomic<int64_t> g_first_ns{0};  // CLOCK_MONOTONIC time of the first interrupt

int64_t monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

const char* signal_text(int signo) {  // static strings only: used inside the handler
  switch (signo) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

void say(const char* a, const char* b = "", const char* c = "", const char* d = "", const char* e = "") {
  // write(2) only: async-signal-safe
  for (const char* s : {a, b, c, d, e}) (void)!::write(STDERR_FILENO, s, std::strlen(s));
}

extern "C" void on_interrupt_signal(int signo) {
  const int64_t now = monotonic_ns();
  const char* name = signal_text(signo);
  if (g_signal.load() != 0) {
    // The same signal delivered twice: a terminal signals a launcher (torchrun) and its workers, and the
    // launcher forwards the signal again a moment later.
    if (now - g_first_ns.load() < kSameInterruptWindowMs * 1000000) return;
    say("\nSecond interrupt (", name, "): exiting now.\n");
    remove_registered_temporaries();
    ::_exit(128 + signo);
  }
  g_first_ns.store(now);
  g_signal.store(signo);
  say("\nInterrupt (", name, "): stopping after the current step (",
      signo == SIGINT ? "Ctrl-C again" : "the same signal again", " to exit now).\n");
}
}  // namespace

void install_interrupt_handler() {
  install_exit_cleanup();
  struct sigaction sa {};
  sa.sa_handler = on_interrupt_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (const int signo : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signo, &sa, nullptr);
}

bool interrupt_requested() { return g_signal.load() != 0; }
int interrupt_signal() { return g_signal.load(); }
int interrupt_exit_status() { return 128 + (g_signal.load() != 0 ? g_signal.load() : SIGINT); }

std::string signal_name(int signo) {
  if (signo == SIGINT || signo == SIGTERM || signo == SIGHUP) return signal_text(signo);
  return "signal " + std::to_string(signo);
}

void request_interrupt(int signo) {
  g_first_ns.store(monotonic_ns());
  g_signal.store(signo);
}
void clear_interrupt() { g_signal.store(0); }

}  // namespace torchfit::runtime
