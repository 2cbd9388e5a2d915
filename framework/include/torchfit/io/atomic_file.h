#pragma once
/// @file atomic_file.h
/// Atomic file writes: write a temporary file beside the target, flush + fsync, rename over the target,
/// fsync the directory. A reader sees the old file or the new one, never a partial one.
#include <functional>
#include <string>

namespace torchfit::io {

/// Writes `path` atomically through `write_to(tmp_path)` (which must create tmp_path).
/// Errors: torchfit::IoError naming the path when the directory is missing or unwritable, or the
/// rename fails; the temporary file is removed on failure.
void write_atomically(const std::string& path, const std::function<void(const std::string& tmp_path)>& write_to);

/// Writes `text` to `path` atomically.
void write_text_atomically(const std::string& path, const std::string& text);

/// Creates `dir` (and parents) and probes that a file can be written there.
/// Errors: torchfit::IoError naming the directory and the reason (e.g. read-only, full disk).
void ensure_writable_directory(const std::string& dir);

}  // namespace torchfit::io
