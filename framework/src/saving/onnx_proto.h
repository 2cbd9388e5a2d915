#pragma once
// Protocol Buffers wire format (https://protobuf.dev/programming-guides/encoding/), only what the ONNX
// exporter writes: varints, 32-bit floats, length-delimited strings/bytes/messages. No dependency on
// libprotobuf (docs/deployment.md says why). Field numbers are ONNX's (onnx/onnx.proto, ONNX 1.12).
#include <cstdint>
#include <string>
#include <vector>

namespace torchfit::saving::proto {

/// One message being written: fields are appended in call order (proto2 repeated fields unpacked,
/// which every parser accepts).
class Writer {
 public:
  /// A varint field (int32, int64, enum, bool): wire type 0. Negative values take 10 bytes (int64 rule).
  Writer& varint(uint32_t field, int64_t value);
  /// A 32-bit float field: wire type 5, little-endian IEEE-754.
  Writer& float32(uint32_t field, float value);
  /// A length-delimited field (string, bytes): wire type 2.
  Writer& bytes(uint32_t field, const std::string& value);
  /// An embedded message: wire type 2 with the message's bytes.
  Writer& message(uint32_t field, const Writer& value) { return bytes(field, value.data_); }
  /// Each value as its own varint field (an unpacked repeated int64).
  Writer& varints(uint32_t field, const std::vector<int64_t>& values);
  const std::string& data() const { return data_; }

 private:
  void tag(uint32_t field, uint32_t wire_type);
  void raw_varint(uint64_t value);
  std::string data_;
};

}  // namespace torchfit::saving::proto
