#include <torchfit/io/tfevents.h>

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <torchfit/error.h>

#include "io/protobuf.h"

namespace torchfit::io {
namespace {

std::array<uint32_t, 256> crc32c_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}

// tensorflow.Event's wall_time (double, field 1) and, when not 0, step (int64, field 2).
ProtobufWriter event_header(double wall_time, int64_t step) {
  ProtobufWriter e;
  e.float64(1, wall_time);
  if (step != 0) e.varint(2, step);
  return e;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string os_reason() { return std::strerror(errno); }

}  // namespace

uint32_t crc32c(const void* data, size_t size) {
  static const std::array<uint32_t, 256> table = crc32c_table();
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(const void* data, size_t size) {
  const uint32_t c = crc32c(data, size);
  return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

std::string tfrecord(const std::string& payload) {
  const std::string length = little_endian(static_cast<uint64_t>(payload.size()));
  return length + little_endian(masked_crc32c(length.data(), length.size())) + payload +
         little_endian(masked_crc32c(payload.data(), payload.size()));
}

std::string file_version_event(double wall_time) {
  return event_header(wall_time, 0).bytes(3, "brain.Event:2").data();  // Event.file_version
}

std::string scalar_event(const std::string& tag, double value, int64_t step, double wall_time) {
  ProtobufWriter plugin, metadata, tensor, v, summary;
  plugin.bytes(1, "scalars");                   // PluginData.plugin_name
  metadata.message(1, plugin).varint(4, 1);     // SummaryMetadata.plugin_data, data_class = DATA_CLASS_SCALAR
  tensor.varint(1, 1).bytes(2, std::string());  // TensorProto.dtype = DT_FLOAT, tensor_shape: a scalar (no dims)
  tensor.bytes(5, little_endian(static_cast<float>(value)));        // TensorProto.float_val (packed)
  v.bytes(1, tag).message(8, tensor).message(9, metadata);          // Summary.Value: tag, tensor, metadata
  summary.message(1, v);                                            // Summary.value
  return event_header(wall_time, step).message(5, summary).data();  // Event.summary
}

EventFileWriter::EventFileWriter(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError("TensorBoard: cannot create the folder '" + dir + "': " + ec.message());
  static std::atomic<int> counter{0};
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  const double now = now_seconds();
  path_ =
      (std::filesystem::path(dir) / ("events.out.tfevents." + std::to_string(static_cast<int64_t>(now)) + "." + host +
                                     "." + std::to_string(getpid()) + "." + std::to_string(counter++) + ".v2"))
          .string();
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) throw IoError("TensorBoard: cannot create '" + path_ + "': " + os_reason());
  write(file_version_event(now));
}

EventFileWriter::~EventFileWriter() {
  if (file_) std::fclose(file_);
}

void EventFileWriter::add_scalar(const std::string& tag, double value, int64_t step, double wall_time) {
  write(scalar_event(tag, value, step, wall_time < 0 ? now_seconds() : wall_time));
}

void EventFileWriter::write(const std::string& event) {
  const std::string record = tfrecord(event);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() || std::fflush(file_) != 0) {
    throw IoError("TensorBoard: cannot write '" + path_ + "': " + os_reason());
  }
}

}  // namespace torchfit::io
