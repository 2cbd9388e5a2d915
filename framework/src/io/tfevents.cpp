#include <torchfit/io/tfevents.h>

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <torchfit/error.h>

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

// Protocol-buffer wire format: varints, tags, length-delimited fields, fixed 64/32-bit fields.
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_tag(std::string& out, int field, int wire_type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}
void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}
template <typename T>
std::string little_endian(T v) {  // the hosts LibTorch supports are little-endian
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

std::string event_header(double wall_time, int64_t step) {
  std::string e;
  put_tag(e, 1, 1);  // Event.wall_time (double)
  e += little_endian(wall_time);
  if (step != 0) {
    put_tag(e, 2, 0);  // Event.step (int64)
    put_varint(e, static_cast<uint64_t>(step));
  }
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
  std::string e = event_header(wall_time, 0);
  put_bytes(e, 3, "brain.Event:2");  // Event.file_version
  return e;
}

std::string scalar_event(const std::string& tag, double value, int64_t step, double wall_time) {
  std::string plugin, metadata, tensor, shape, v, summary;
  put_bytes(plugin, 1, "scalars");  // PluginData.plugin_name
  put_bytes(metadata, 1, plugin);   // SummaryMetadata.plugin_data
  put_tag(metadata, 4, 0);          // SummaryMetadata.data_class = DATA_CLASS_SCALAR
  put_varint(metadata, 1);
  put_tag(tensor, 1, 0);  // TensorProto.dtype = DT_FLOAT
  put_varint(tensor, 1);
  put_bytes(tensor, 2, shape);                                     // TensorProto.tensor_shape: a scalar (no dims)
  put_bytes(tensor, 5, little_endian(static_cast<float>(value)));  // TensorProto.float_val (packed)
  put_bytes(v, 1, tag);                                            // Summary.Value.tag
  put_bytes(v, 8, tensor);                                         // Summary.Value.tensor
  put_bytes(v, 9, metadata);                                       // Summary.Value.metadata
  put_bytes(summary, 1, v);                                        // Summary.value
  std::string e = event_header(wall_time, step);
  put_bytes(e, 5, summary);  // Event.summary
  return e;
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
