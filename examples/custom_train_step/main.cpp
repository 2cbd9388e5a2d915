// custom_train_step OUT_DIR [EPOCHS] [IMAGES] [CONSISTENCY] — Keras 3's "customizing what happens in
// fit()" in torchfit: a Trainer subclass overrides train_step and test_step to train a small CNN on
// Fashion-MNIST with two losses, the compiled sparse cross-entropy plus CONSISTENCY (default 1.0) times
// a flip-consistency term (the squared difference between the class probabilities of each image and of
// its mirror image). fit() keeps the progress line (loss, ce, consistency and their val_ values),
// EarlyStopping on val_ce, the checkpoint OUT_DIR/consistency.ckpt and resume; the first IMAGES (default
// 6000) training images train for EPOCHS (default 2), the first 2000 test images validate.
#include <filesystem>
#include <iostream>
#include <string>

#include <torchfit/data/arrays.h>
#include <torchfit/data/idx.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/training/early_stopping.h>
#include <torchfit/training/trainer.h>

using namespace torchfit;

namespace {

// loss = compiled loss + weight · mean_n Σ_k (p_k(x_n) − p_k(mirror(x_n)))².
class ConsistencyTrainer : public Trainer {
 public:
  ConsistencyTrainer(Model model, CompileOptions options, double weight)
      : Trainer(std::move(model), std::move(options)), weight_(weight) {}

  Logs train_step(const data::Batch& batch) override {
    const auto [ce, consistency] = losses(batch);
    const at::Tensor loss = ce + weight_ * consistency;
    minimize(loss);  // one optimizer step through fit's loss scaling, accumulation and clipping
    return {{"loss", loss.item<double>()}, {"ce", ce.item<double>()}, {"consistency", consistency.item<double>()}};
  }
  Logs test_step(const data::Batch& batch) override {
    const auto [ce, consistency] = losses(batch);
    return {{"loss", (ce + weight_ * consistency).item<double>()},
            {"ce", ce.item<double>()},
            {"consistency", consistency.item<double>()}};
  }
  std::vector<std::string> step_names() const override { return {"ce", "consistency"}; }

 private:
  std::pair<at::Tensor, at::Tensor> losses(const data::Batch& batch) {
    const std::vector<at::Tensor> out = call_model(batch);  // logits: the compiled loss takes them
    data::Batch mirrored = batch;
    mirrored.x = batch.x.flip({3});  // (N, C, H, W): mirror the width
    const std::vector<at::Tensor> other = call_model(mirrored);
    auto probs = [&](const at::Tensor& z) { return compiled_outputs().logits() ? at::softmax(z, 1) : z; };
    return {compiled_loss(batch, out), (probs(out[0]) - probs(other[0])).pow(2).sum(1).mean()};
  }
  double weight_;
};

Sequential small_cnn() {
  Sequential m;
  m->add(Conv2D(Conv2DOptions(16, 3).activation("relu").input_shape(Shape{28, 28, 1})));
  m->add(MaxPooling2D(MaxPooling2DOptions()));
  m->add(Conv2D(Conv2DOptions(32, 3).activation("relu")));
  m->add(MaxPooling2D(MaxPooling2DOptions()));
  m->add(Flatten());
  m->add(Dense(DenseOptions(10).activation("softmax")));
  return m;
}

// The first n images of Debian's Fashion-MNIST part ("train" or "t10k") as (n, 1, 28, 28) in [0, 1], labels (n).
data::Arrays fashion(const std::string& part, int64_t n) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  const auto images = data::read_idx_file(dir + part + "-images-idx3-ubyte.gz");
  const auto labels = data::read_idx_file(dir + part + "-labels-idx1-ubyte.gz");
  n = std::min(n, images.dims[0]);
  at::Tensor x = at::from_blob(const_cast<uint8_t*>(images.data.data()), {images.dims[0], 1, 28, 28}, at::kByte)
                     .slice(0, 0, n)
                     .to(at::kFloat)
                     .div(255.0);
  at::Tensor y =
      at::from_blob(const_cast<uint8_t*>(labels.data.data()), {labels.dims[0]}, at::kByte).slice(0, 0, n).to(at::kLong);
  return data::Arrays(x, y);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: custom_train_step OUT_DIR [EPOCHS] [IMAGES] [CONSISTENCY]\n";
    return 2;
  }
  try {
    const std::filesystem::path out = argv[1];
    const int epochs = argc > 2 ? std::stoi(argv[2]) : 2;
    const int64_t images = argc > 3 ? std::stoll(argv[3]) : 6000;
    const double weight = argc > 4 ? std::stod(argv[4]) : 1.0;
    std::filesystem::create_directories(out);
    at::manual_seed(42);
    ConsistencyTrainer trainer(small_cnn(), CompileOptions().loss("sparse_categorical_crossentropy"), weight);
    auto stop = std::make_shared<EarlyStopping>(EarlyStoppingOptions().monitor("val_ce").patience(2));
    trainer.fit(fashion("train", images), FitOptions().epochs(epochs).verbose(2).callbacks({stop}),
                ArrayOptions().batch_size(64).shuffle(true).seed(42).validation_data(fashion("t10k", 2000)));
    const at::Tensor test_x = fashion("t10k", 2000).x, test_y = fashion("t10k", 2000).y;
    const double accuracy = trainer.predict(test_x, 256).argmax(1).eq(test_y).to(at::kFloat).mean().item<double>();
    std::cout << "test accuracy (2000 images): " << accuracy << "\n";
    trainer.save_checkpoint((out / "consistency.ckpt").string());
    std::cout << "Saved " << (out / "consistency.ckpt").string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "custom_train_step: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
