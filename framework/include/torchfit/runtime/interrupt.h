#pragma once
/// @file interrupt.h
/// Ctrl-C handling for long runs: the first SIGINT asks training to stop after the current step (the
/// app then writes a checkpoint and exits 130); a second SIGINT exits at once with status 130. A SIGINT
/// within kSameInterruptWindowMs of the first is the same interrupt: a terminal's Ctrl-C reaches torchrun
/// and its workers, and torchrun forwards it to them again.
#include <cstdint>

namespace torchfit::runtime {

/// A second SIGINT this soon after the first (ms) counts as the same interrupt.
inline constexpr int64_t kSameInterruptWindowMs = 1000;

/// Installs the SIGINT handler (idempotent). Apps call it before fit().
void install_interrupt_handler();

/// True once a SIGINT arrived after install_interrupt_handler() (or request_interrupt() was called).
bool interrupt_requested();

/// Asks for the same graceful stop as a first SIGINT (tests, embedding programs).
void request_interrupt();

/// Clears the request (e.g. before a new fit()).
void clear_interrupt();

}  // namespace torchfit::runtime
