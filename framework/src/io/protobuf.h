#pragma once
// The Protocol Buffers wire format (https://protobuf.dev/programming-guides/encoding/), written by hand for
// the two protobuf files torchfit writes: TensorBoard event files (io/tfevents.cpp) and ONNX models
// (io/onnx_graph.cpp). Only what they need: varints, 32- and 64-bit floats, length-delimited
// strings/bytes/messages. No dependency on libprotobuf (docs/deployment.md says why).
//
// Byte order, one rule for every file torchfit writes this way: fixed-width values (protobuf's 32/64-bit
// fields, TFRecord's lengths and CRCs, ONNX's raw tensor data) are little-endian whatever the host's order.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace torchfit::io {

/// Appends `count` values of `width` bytes (1, 2, 4 or 8), stored at `data` in the host's order, to `out`
/// little-endian (a copy on a little-endian host, each value's bytes reversed on a big-endian one).
void append_little_endian(std::string& out, const void* data, size_t count, size_t width);

/// The bytes of `value` (an integer or floating-point scalar) little-endian.
template <typename T>
std::string little_endian(T value) {
  static_assert(std::is_arithmetic_v<T>, "little_endian takes an integer or floating-point value");
  std::string out;
  append_little_endian(out, &value, 1, sizeof(T));
  return out;
}

/// One message being written: fields are appended in call order (repeated fields unpacked, which every
/// proto2 and proto3 parser accepts; a packed field is bytes() of its values).
class ProtobufWriter {
 public:
  /// A varint field (int32, int64, enum, bool): wire type 0. Negative values take 10 bytes (int64 rule).
  ProtobufWriter& varint(uint32_t field, int64_t value);
  /// A 32-bit float field: wire type 5, IEEE-754 little-endian.
  ProtobufWriter& float32(uint32_t field, float value);
  /// A 64-bit double field: wire type 1, IEEE-754 little-endian.
  ProtobufWriter& float64(uint32_t field, double value);
  /// A length-delimited field (string, bytes, a packed repeated field): wire type 2.
  ProtobufWriter& bytes(uint32_t field, const std::string& value);
  /// An embedded message: wire type 2 with the message's bytes.
  ProtobufWriter& message(uint32_t field, const ProtobufWriter& value) { return bytes(field, value.data_); }
  /// Each value as its own varint field (an unpacked repeated int64).
  ProtobufWriter& varints(uint32_t field, const std::vector<int64_t>& values);
  /// The message's bytes so far.
  const std::string& data() const { return data_; }

 private:
  void tag(uint32_t field, uint32_t wire_type);
  void raw_varint(uint64_t value);
  std::string data_;
};

}  // namespace torchfit::io
