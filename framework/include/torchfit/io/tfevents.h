#pragma once
/// @file tfevents.h
/// TensorBoard event files, written without TensorFlow: TFRecord framing (uint64 length, masked CRC32C
/// of the length, the bytes, masked CRC32C of the bytes; little-endian) around `tensorflow.Event`
/// protocol buffers encoded by hand. Scalars are written as TensorFlow 2.x's tf.summary.scalar writes
/// them (Summary.Value with a float32 scalar TensorProto and SummaryMetadata plugin "scalars",
/// data_class DATA_CLASS_SCALAR), which TensorBoard ≥ 2.0 reads; the file starts with the
/// `file_version: "brain.Event:2"` event.
#include <cstdint>
#include <cstdio>
#include <string>

namespace torchfit::io {

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord uses: crc32c("123456789") = 0xE3069283.
uint32_t crc32c(const void* data, size_t size);
/// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xA282EAD8.
uint32_t masked_crc32c(const void* data, size_t size);
/// One TFRecord: length, masked CRC of the length, `payload`, masked CRC of the payload.
std::string tfrecord(const std::string& payload);
/// A serialized tensorflow.Event holding one scalar summary (`tag`, float32 `value`) at `step`.
std::string scalar_event(const std::string& tag, double value, int64_t step, double wall_time);
/// The serialized first Event of every file: file_version "brain.Event:2".
std::string file_version_event(double wall_time);

/// Appends events to a new file `dir/events.out.tfevents.<seconds>.<host>.<pid>.<n>.v2` (the folder is
/// created). Each add_scalar is flushed to the OS at once (TensorBoard reads growing files).
/// Errors: IoError naming the folder or file and the OS reason when it cannot be created or written.
class EventFileWriter {
 public:
  explicit EventFileWriter(const std::string& dir);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  /// Writes one scalar; `wall_time` in seconds since the epoch (default: now).
  void add_scalar(const std::string& tag, double value, int64_t step, double wall_time = -1);
  const std::string& path() const { return path_; }

 private:
  void write(const std::string& event);
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace torchfit::io
