#pragma once
/// @file interrupt.h
/// Stopping long runs cleanly. SIGINT (Ctrl-C), SIGTERM (a batch scheduler, `timeout`, `kill`, torchrun
/// forwarding its own SIGTERM) and SIGHUP (a closed terminal or ssh session) are handled alike: the first
/// one asks training to stop after the current step (train_cnn then writes a checkpoint, marks run.json
/// "interrupted" with the signal's name and exits 128 + the signal's number: 130, 143, 129); a second one
/// exits at once with 128 + its number, after removing the temporary files of writes in progress
/// (runtime/cleanup.h). A second signal within kSameInterruptWindowMs of the first is the same interrupt:
/// a terminal's Ctrl-C reaches torchrun and its workers, and torchrun forwards it to them again.
#include <cstdint>
#include <string>

namespace torchfit::runtime {

/// A second signal this soon after the first (ms) counts as the same interrupt.
inline constexpr int64_t kSameInterruptWindowMs = 1000;

/// Installs the handler for SIGINT, SIGTERM and SIGHUP (idempotent), and the exit clean-up of
/// cleanup.h. Apps call it before fit().
void install_interrupt_handler();

/// True once an interrupt arrived after install_interrupt_handler() (or request_interrupt() was called).
bool interrupt_requested();

/// The number of the signal that asked for the stop (SIGINT, SIGTERM, SIGHUP); 0 when none did.
int interrupt_signal();

/// The exit status of a run stopped by interrupt_signal(): 128 + its number (130 when there is none).
int interrupt_exit_status();

/// "SIGINT", "SIGTERM", "SIGHUP", … ("signal N" for others).
std::string signal_name(int signo);

/// Asks for the same graceful stop as a first signal `signo` (tests, embedding programs; default SIGINT).
void request_interrupt(int signo = 2);

/// Clears the request (e.g. before a new fit()).
void clear_interrupt();

}  // namespace torchfit::runtime
