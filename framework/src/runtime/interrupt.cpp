#include <torchfit/runtime/interrupt.h>

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace torchfit::runtime {
namespace {
std::atomic<int> g_interrupts{0};

extern "C" void on_sigint(int) {
  if (g_interrupts.fetch_add(1) >= 1) {
    static const char msg[] = "\nSecond interrupt: exiting now.\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(130);
  }
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
void request_interrupt() { g_interrupts.store(1); }
void clear_interrupt() { g_interrupts.store(0); }

}  // namespace torchfit::runtime
