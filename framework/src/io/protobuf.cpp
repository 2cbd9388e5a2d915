#include "io/protobuf.h"

namespace torchfit::io {

namespace {
bool host_is_little_endian() {
  const uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}
}  // namespace

void append_little_endian(std::string& out, const void* data, size_t count, size_t width) {
  const auto* bytes = static_cast<const char*>(data);
  static const bool little = host_is_little_endian();
  if (little || width == 1) {
    out.append(bytes, count * width);
    return;
  }
  out.reserve(out.size() + count * width);
  for (size_t i = 0; i < count; ++i) {
    for (size_t b = width; b-- > 0;) out.push_back(bytes[i * width + b]);
  }
}

void ProtobufWriter::raw_varint(uint64_t value) {
  while (value >= 0x80) {
    data_.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  data_.push_back(static_cast<char>(value));
}

void ProtobufWriter::tag(uint32_t field, uint32_t wire_type) {
  raw_varint((static_cast<uint64_t>(field) << 3) | wire_type);
}

ProtobufWriter& ProtobufWriter::varint(uint32_t field, int64_t value) {
  tag(field, 0);
  raw_varint(static_cast<uint64_t>(value));
  return *this;
}

ProtobufWriter& ProtobufWriter::float32(uint32_t field, float value) {
  tag(field, 5);
  append_little_endian(data_, &value, 1, sizeof value);
  return *this;
}

ProtobufWriter& ProtobufWriter::float64(uint32_t field, double value) {
  tag(field, 1);
  append_little_endian(data_, &value, 1, sizeof value);
  return *this;
}

ProtobufWriter& ProtobufWriter::bytes(uint32_t field, const std::string& value) {
  tag(field, 2);
  raw_varint(value.size());
  data_ += value;
  return *this;
}

ProtobufWriter& ProtobufWriter::varints(uint32_t field, const std::vector<int64_t>& values) {
  for (int64_t v : values) varint(field, v);
  return *this;
}

}  // namespace torchfit::io
