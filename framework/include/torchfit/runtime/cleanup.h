#pragma once
/// @file cleanup.h
/// Temporary files that must not outlive their process: an atomic write (io/atomic_file.h) registers its
/// temporary here while it exists, and every exit path that can still run code removes what is
/// registered: an exception (the writer's own clean-up), exit() and a return from main (atexit),
/// std::terminate (an uncaught exception), the interrupt handler's immediate exit on a second signal
/// (interrupt.h), and — once install_exit_cleanup() ran — a SIGTERM, SIGHUP or SIGINT whose action is
/// still the default, or a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT), after which the signal
/// takes its default course. A file-size limit (SIGXFSZ) is ignored, so the write fails as on a full disk.
/// Only SIGKILL (and power loss) leave a temporary; the next atomic write to the same target removes
/// those of dead processes.
#include <string>

namespace torchfit::runtime {

/// Registers `path` for removal at exit while the object lives (the destructor unregisters it, it does
/// not remove the file). At most kMaxTemporaries at once; further ones are not registered.
class TemporaryFile {
 public:
  static constexpr int kMaxTemporaries = 64;
  explicit TemporaryFile(const std::string& path);
  ~TemporaryFile();
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

 private:
  int slot_ = -1;
};

/// Unlinks every registered temporary file (async-signal-safe: unlink(2) only).
void remove_registered_temporaries() noexcept;

/// Installs, once per process: an atexit hook and a std::terminate handler that call
/// remove_registered_temporaries(), and handlers for SIGTERM, SIGHUP, SIGINT (only where their action is
/// the default) and SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT (same condition) that remove them and then
/// re-raise the signal with its default action (so the exit status is the signal's, as before). SIGXFSZ
/// (a file-size limit, `ulimit -f`) is ignored where its action is the default, so that a write past the
/// limit fails with EFBIG (an IoError naming the file, as a full disk) instead of killing the process.
void install_exit_cleanup();

}  // namespace torchfit::runtime
