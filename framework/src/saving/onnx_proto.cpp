#include "saving/onnx_proto.h"

#include <cstring>

namespace torchfit::saving::proto {

void Writer::raw_varint(uint64_t value) {
  while (value >= 0x80) {
    data_.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  data_.push_back(static_cast<char>(value));
}

void Writer::tag(uint32_t field, uint32_t wire_type) { raw_varint((static_cast<uint64_t>(field) << 3) | wire_type); }

Writer& Writer::varint(uint32_t field, int64_t value) {
  tag(field, 0);
  raw_varint(static_cast<uint64_t>(value));
  return *this;
}

Writer& Writer::float32(uint32_t field, float value) {
  tag(field, 5);
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 4; ++i) data_.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  return *this;
}

Writer& Writer::bytes(uint32_t field, const std::string& value) {
  tag(field, 2);
  raw_varint(value.size());
  data_ += value;
  return *this;
}

Writer& Writer::varints(uint32_t field, const std::vector<int64_t>& values) {
  for (int64_t v : values) varint(field, v);
  return *this;
}

}  // namespace torchfit::saving::proto
