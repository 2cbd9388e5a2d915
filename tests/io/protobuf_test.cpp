// The protobuf wire writer TensorBoard event files and ONNX models share (io/protobuf.h), against the
// encoding specification's examples (https://protobuf.dev/programming-guides/encoding/).
#include <gtest/gtest.h>

#include "io/protobuf.h"

using torchfit::io::ProtobufWriter;

TEST(ProtobufWriter, EncodesTheProtobufSpecificationExamples) {
  // Field 1 = 150 is 08 96 01; field 2 = "testing" is 12 07 74 65 73 74 69 6e 67.
  EXPECT_EQ(ProtobufWriter().varint(1, 150).data(), std::string("\x08\x96\x01", 3));
  EXPECT_EQ(ProtobufWriter().bytes(2, "testing").data(), std::string("\x12\x07testing", 9));
  // A negative int64 is ten bytes (two's complement as uint64); 1.0f is 0x3f800000 little-endian, wire type 5.
  EXPECT_EQ(ProtobufWriter().varint(3, -1).data(), std::string("\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11));
  EXPECT_EQ(ProtobufWriter().float32(2, 1.0f).data(), std::string("\x15\x00\x00\x80\x3f", 5));
  // Field 16 needs a two-byte tag: (16 << 3) | 2 = 130 = 82 01.
  ProtobufWriter inner;
  inner.varint(1, 1);
  EXPECT_EQ(ProtobufWriter().message(16, inner).data(), std::string("\x82\x01\x02\x08\x01", 5));
}

TEST(ProtobufWriter, WritesDoublesAndFixedWidthValuesLittleEndian) {
  // 1.0 is 0x3ff0000000000000: wire type 1, the low byte first.
  EXPECT_EQ(ProtobufWriter().float64(1, 1.0).data(), std::string("\x09\x00\x00\x00\x00\x00\x00\xf0\x3f", 9));
  EXPECT_EQ(torchfit::io::little_endian(uint32_t{0x01020304}), std::string("\x04\x03\x02\x01", 4));
  EXPECT_EQ(torchfit::io::little_endian(uint64_t{0x0102}), std::string("\x02\x01\x00\x00\x00\x00\x00\x00", 8));
  const int64_t values[] = {1, -1};
  std::string raw;
  torchfit::io::append_little_endian(raw, values, 2, sizeof(int64_t));
  EXPECT_EQ(raw, std::string("\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff", 16));
}
