#pragma once
/// @file logging.h
/// Where torchfit's log lines go: stderr, so that stdout stays a program's output (the "Found N images"
/// line, predictions, JSON). torchfit logs through spdlog's default logger; spdlog's own default writes
/// to stdout, so torchfit swaps it for a stderr one the first time it logs — unless the program has
/// installed a default logger of its own (spdlog::set_default_logger), which is then used as it is.
#include <spdlog/logger.h>

namespace torchfit {

/// spdlog's default logger, moved to stderr on first use if it is still spdlog's built-in stdout one
/// (level and flush level kept). Thread-safe. torchfit's library and apps log through it, e.g.
/// `torchfit::logger().warn("skipping unreadable image {}: {}", path, reason)`.
spdlog::logger& logger();

/// Replaces spdlog's default logger by one writing to stderr (colour when stderr is a terminal), with
/// the previous logger's level and flush level, and the same line layout
/// ("[2026-12-01 10:00:00.000] [warning] text"). Apps call it first thing, so that their own lines go
/// to stderr too.
void log_to_stderr();

}  // namespace torchfit
