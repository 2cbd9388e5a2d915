// onnx_zoo OUT_DIR — writes every model of tests/support/onnx_models.h for tests/scripts/onnx_export_test.sh:
//   OUT_DIR/<model>.opset<N>.onnx  (N = 13, 17), and "user_layers": examples/custom_layer's Swish and
//                                  ResidualBlock through their Layer::export_onnx hooks
//   OUT_DIR/<model>.input.npy      float32 (2, C, H, W) input, uniform [0, 1)
//   OUT_DIR/<model>.output.npy     torchfit's forward of it (float32)
//   OUT_DIR/seed_cnn.ckpt          the seed CNN above as a checkpoint with five class names (convert_model)
#include <fstream>
#include <iostream>

#include <torchfit/saving/checkpoint.h>
#include <torchfit/saving/onnx.h>

#include "residual_block.h"  // examples/custom_layer: user layers with export_onnx hooks
#include "support/onnx_models.h"
#include "swish.h"

using namespace torchfit;

namespace {

// NumPy .npy format 1.0 of a float32 tensor (little-endian host).
void write_npy(const std::string& path, const at::Tensor& t) {
  std::string shape = "(";
  for (int64_t d : t.sizes()) shape += std::to_string(d) + ", ";
  shape += ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append(63 - (10 + header.size()) % 64, ' ');  // 10-byte preamble + header + '\n' ≡ 0 (mod 64)
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<uint16_t>(header.size());
  out.put(static_cast<char>(len & 0xFF)).put(static_cast<char>(len >> 8));
  out << header;
  const at::Tensor c = t.contiguous().to(at::kFloat);
  out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.numel() * 4));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: onnx_zoo OUT_DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  try {
    saving::TrainingState state;
    auto models = testing::onnx_test_models();
    models["user_layers"] = [] {
      return testing::image_model("user_layers", {6, 6, 3}, [](KerasTensor x) {
        x = ResidualBlock()->call(Swish(SwishOptions().beta(1.5))->call(x));
        return Swish()->call(x);
      });
    };
    for (const auto& [name, build] : models) {
      Model model = build();
      if (name == "seed_cnn") state.model = model;
      testing::randomize_weights(model, 21);
      at::manual_seed(22);
      Shape dims = to_tensor_shape(model->input_shape());
      dims.insert(dims.begin(), 2);
      const at::Tensor x = at::rand(dims);
      write_npy(dir + "/" + name + ".input.npy", x);
      write_npy(dir + "/" + name + ".output.npy", model->forward(x));
      for (int opset : {13, 17}) {
        saving::OnnxExportOptions options;
        options.opset = opset;
        saving::export_onnx(model, dir + "/" + name + ".opset" + std::to_string(opset) + ".onnx", options);
      }
    }
    state.class_indices = {{"cat", 0}, {"dog", 1}, {"owl", 2}, {"eel", 3}, {"yak", 4}};
    saving::save_checkpoint(dir + "/seed_cnn.ckpt", state);
  } catch (const std::exception& e) {
    std::cerr << "onnx_zoo: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
