// functional_resnet OUT_DIR [STEPS] — builds ResNet-8 (MLCommons Tiny's CIFAR-10 model: three residual
// stacks of 16, 32, 64 filters, BatchNormalization, L2(1e-4) kernels) with torchfit's functional API,
// prints its Keras summary (78,666 parameters for 32×32×3 inputs and 10 classes), trains it for STEPS
// (default 20) steps on Fashion-MNIST (28×28 gray images zero-padded to 32×32×3) and saves
// OUT_DIR/resnet8.ckpt and OUT_DIR/resnet8.json (tf.keras 2.x functional JSON: train_cnn --model-config).
#include <filesystem>
#include <fstream>
#include <iostream>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/data/idx.h>
#include <torchfit/layers/activation.h>
#include <torchfit/layers/average_pooling2d.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/merge.h>
#include <torchfit/model/model.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/trainer.h>

using namespace torchfit;

namespace {

// Conv2D(filters, kernel, strides, same) with L2(1e-4) on the kernel, as the Keras reference model.
KerasTensor conv(const KerasTensor& x, int64_t filters, int64_t kernel, int64_t strides) {
  Conv2D c(Conv2DOptions(filters, kernel).strides(strides).padding("same"));
  c->set_regularizer("kernel", {0.0, 1e-4});
  return c->call(x);
}

KerasTensor bn(const KerasTensor& x) { return BatchNormalization()->call(x); }
KerasTensor relu(const KerasTensor& x) { return Activation(ActivationOptions("relu"))->call(x); }

// One residual stack: conv-bn-relu-conv-bn, plus the input (a strided 1×1 conv when the shape changes).
KerasTensor stack(const KerasTensor& x, int64_t filters, int64_t strides) {
  KerasTensor y = bn(conv(relu(bn(conv(x, filters, 3, strides))), filters, 3, 1));
  KerasTensor shortcut = strides == 1 ? x : conv(x, filters, 1, strides);
  return relu(Add()->call({shortcut, y}));
}

Model resnet8(const Shape& input_shape, int64_t classes) {
  KerasTensor inputs = Input(input_shape);
  KerasTensor x = relu(bn(conv(inputs, 16, 3, 1)));
  x = stack(x, 16, 1);
  x = stack(x, 32, 2);
  x = stack(x, 64, 2);
  x = AveragePooling2D(Pooling2DOptions(8))->call(x);
  x = Flatten()->call(x);
  x = Dense(DenseOptions(classes).activation("softmax"))->call(x);
  return Model({inputs}, {x}, "resnet8");
}

// The first n Fashion-MNIST training images as (n, 3, 32, 32) in [0, 1] (zero-padded 28 → 32, gray
// repeated on 3 channels) with one-hot labels.
std::pair<at::Tensor, at::Tensor> fashion_mnist(int64_t n) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  const auto images = data::read_idx_file(dir + "train-images-idx3-ubyte.gz");
  const auto labels = data::read_idx_file(dir + "train-labels-idx1-ubyte.gz");
  at::Tensor x = at::from_blob(const_cast<uint8_t*>(images.data.data()), {images.dims[0], 1, 28, 28}, at::kByte)
                     .slice(0, 0, n)
                     .to(at::kFloat)
                     .div(255.0);
  x = at::constant_pad_nd(x, {2, 2, 2, 2}).expand({n, 3, 32, 32}).contiguous();
  at::Tensor y =
      at::from_blob(const_cast<uint8_t*>(labels.data.data()), {labels.dims[0]}, at::kByte).slice(0, 0, n).to(at::kLong);
  return {x, at::one_hot(y, 10).to(at::kFloat)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: functional_resnet OUT_DIR [STEPS]\n";
    return 2;
  }
  try {
    const std::filesystem::path out = argv[1];
    const int64_t steps = argc > 2 ? std::stoll(argv[2]) : 20;
    std::filesystem::create_directories(out);
    at::manual_seed(42);
    Model model = resnet8({32, 32, 3}, 10);
    model->print_summary(std::cout);
    auto [x, y] = fashion_mnist(32 * steps);
    data::TensorIterator train(x, y, 32, /*shuffle=*/true, 42);
    Trainer trainer(model, CompileOptions().loss("categorical_crossentropy").metrics({"accuracy"}));
    trainer.fit(train, FitOptions().epochs(1).steps_per_epoch(steps));
    trainer.save_checkpoint((out / "resnet8.ckpt").string());
    std::ofstream((out / "resnet8.json").string()) << model->to_json().dump(2) << "\n";
    std::cout << "Saved " << (out / "resnet8.ckpt").string() << " and " << (out / "resnet8.json").string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "functional_resnet: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
