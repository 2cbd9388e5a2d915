// A minimal protobuf reader (https://protobuf.dev/programming-guides/encoding/) for the few ONNX fields
// onnx_classify reads (onnx.proto: ModelProto.graph = 7, metadata_props = 14; GraphProto.input = 11;
// ValueInfoProto.name = 1, type = 2; TypeProto.tensor_type = 1; Tensor.shape = 2; TensorShapeProto.dim = 1;
// Dimension.dim_value = 1; StringStringEntryProto.key = 1, value = 2).
#include "onnx_info.h"

#include <functional>
#include <stdexcept>

namespace {

struct Reader {
  const std::string& s;
  size_t pos = 0;
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= s.size()) throw std::runtime_error("truncated ONNX file");
      const auto b = static_cast<unsigned char>(s[pos++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    throw std::runtime_error("malformed varint in ONNX file");
  }
};

// Calls visit(field, wire_type, varint value, bytes) for each field of the message `msg`.
void each_field(const std::string& msg,
                const std::function<void(uint32_t, uint32_t, uint64_t, const std::string&)>& visit) {
  Reader r{msg};
  while (r.pos < msg.size()) {
    const uint64_t tag = r.varint();
    const auto field = static_cast<uint32_t>(tag >> 3), type = static_cast<uint32_t>(tag & 7);
    uint64_t value = 0;
    std::string bytes;
    if (type == 0) {
      value = r.varint();
    } else if (type == 1 || type == 5) {
      r.pos += type == 1 ? 8 : 4;
    } else if (type == 2) {
      const uint64_t n = r.varint();
      if (n > msg.size() - r.pos) throw std::runtime_error("truncated ONNX file");
      bytes = msg.substr(r.pos, n);
      r.pos += n;
    } else {
      throw std::runtime_error("unsupported protobuf wire type in ONNX file");
    }
    visit(field, type, value, bytes);
  }
}

// The strings of a JSON list of strings, ["a", "b \"c\""].
std::vector<std::string> json_strings(const std::string& json) {
  std::vector<std::string> out;
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] != '"') continue;
    std::string v;
    for (++i; i < json.size() && json[i] != '"'; ++i) v += json[i] == '\\' && i + 1 < json.size() ? json[++i] : json[i];
    out.push_back(v);
  }
  return out;
}

void read_input(const std::string& value_info, OnnxInfo& info) {
  each_field(value_info, [&](uint32_t f, uint32_t, uint64_t, const std::string& b) {
    if (f == 1) info.input_name = b;
    if (f != 2) return;
    each_field(b, [&](uint32_t f2, uint32_t, uint64_t, const std::string& tensor_type) {
      if (f2 != 1) return;
      each_field(tensor_type, [&](uint32_t f3, uint32_t, uint64_t, const std::string& shape) {
        if (f3 != 2) return;
        each_field(shape, [&](uint32_t f4, uint32_t, uint64_t, const std::string& dim) {
          if (f4 != 1) return;
          int64_t d = -1;
          each_field(dim, [&](uint32_t f5, uint32_t t5, uint64_t v, const std::string&) {
            if (f5 == 1 && t5 == 0) d = static_cast<int64_t>(v);
          });
          info.input_dims.push_back(d);
        });
      });
    });
  });
}

}  // namespace

OnnxInfo read_onnx_info(const std::string& bytes) {
  OnnxInfo info;
  each_field(bytes, [&](uint32_t field, uint32_t, uint64_t, const std::string& b) {
    if (field == 7) {
      bool first = true;
      each_field(b, [&](uint32_t f, uint32_t, uint64_t, const std::string& input) {
        if (f == 11 && first) {
          read_input(input, info);
          first = false;
        }
      });
    } else if (field == 14) {
      std::string key, value;
      each_field(b, [&](uint32_t f, uint32_t, uint64_t, const std::string& s) { (f == 1 ? key : value) = s; });
      if (key == "class_names") info.class_names = json_strings(value);
    }
  });
  if (info.input_dims.empty()) throw std::runtime_error("the ONNX file has no graph input");
  return info;
}
