#pragma once
/// @file atomic_file.h
/// Atomic file writes: write a temporary file beside the target, flush + fsync, rename over the target,
/// fsync the directory. A reader sees the old file or the new one, never a partial one.
#include <cstddef>
#include <functional>
#include <string>

namespace torchfit::io {

/// Writes `path` atomically through `write_to(tmp_path)` (which must create tmp_path).
/// Errors: torchfit::IoError naming the path when the directory is missing or unwritable, fsync of the
/// file fails (durable), or the rename fails; the temporary file is removed on failure. `durable` false skips the two
/// fsyncs and the clean-up of temporaries a killed writer left (still atomic for readers, not yet on disk): for writing
/// many small files, followed by one sync_filesystem() before a durable "done" marker.
void write_atomically(const std::string& path, const std::function<void(const std::string& tmp_path)>& write_to,
                      bool durable = true);

/// Receives the bytes of a file being written (see write_stream_atomically); never throws.
using ByteSink = std::function<void(const void* data, std::size_t size)>;
/// Writes `path` atomically from the bytes `produce(sink)` hands to `sink`. A failed write (no space,
/// read-only file system, I/O error) is remembered, later bytes are dropped, and once `produce` returns it
/// is thrown as torchfit::IoError "cannot write '<path>': <OS reason>"; the temporary is removed. The sink
/// never fails toward the producer, so producers that cannot survive an exception mid-write (LibTorch's
/// archive writer aborts the process then) are safe. `durable` as write_atomically.
void write_stream_atomically(const std::string& path, const std::function<void(const ByteSink& sink)>& produce,
                             bool durable = true);
/// Writes `text` (any bytes) to `path` atomically; `durable` as write_atomically.
/// Errors: torchfit::IoError "cannot write '<path>': <strerror(errno)>" when the OS refuses to create,
/// write, flush, close or fsync the file (e.g. "No space left on device", "Read-only file system");
/// the old file, if any, is left as it was.
void write_text_atomically(const std::string& path, const std::string& text, bool durable = true);

/// Flushes everything written to the file system that holds `path` (syncfs). Errors: IoError naming it.
void sync_filesystem(const std::string& path);

/// Creates `dir` (and parents) and probes that a file can be written there.
/// Errors: torchfit::IoError naming the directory and the reason (e.g. read-only, full disk).
void ensure_writable_directory(const std::string& dir);

}  // namespace torchfit::io
