// The functional Model: graph building, shape inference, execution order, shared layers, errors,
// Sequential as a chain, JSON (torchfit's and Keras's), functional summary, freezing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/activation.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/global_pooling2d.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/layers/merge.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>
#include <torchfit/training/trainer.h>
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::config_error_of;

namespace {

// Input (8, 8, 3) → conv(relu) → conv ; shortcut 1×1 conv ; Add → GAP → Dense(3, softmax).
struct Residual {
  Conv2D a{Conv2DOptions(4, 3).padding("same").activation("relu")};
  Conv2D b{Conv2DOptions(4, 3).padding("same")};
  Conv2D shortcut{Conv2DOptions(4, 1)};
  Add add;
  GlobalAveragePooling2D gap;
  Dense head{DenseOptions(3).activation("softmax")};
  Model model{nullptr};
  Residual() {
    auto x = Input({8, 8, 3});
    auto y = b->call(a->call(x));
    auto z = head->call(gap->call(add->call({y, shortcut->call(x)})));
    model = Model({x}, {z}, "residual");
  }
};

// Keras's model_config attribute of a real .h5 file, read with h5py ("" when unavailable).
std::string keras_h5_config(const std::string& path) {
  const std::string cmd =
      "/usr/bin/python3 -c \"import h5py,sys; a=h5py.File(sys.argv[1],'r').attrs['model_config'];"
      " sys.stdout.write(a.decode() if isinstance(a, bytes) else a)\" '" +
      path + "' 2>/dev/null";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

std::string shared_file(const std::string& name) {
  return std::string(TORCHFIT_SOURCE_DIR) + "/../shared/keras_models/" + name;
}

}  // namespace

TEST(Model, InfersShapesAndRunsTheGraphInTopologicalOrder) {
  at::manual_seed(3);
  Residual r;
  EXPECT_EQ(r.model->input_shape(), (Shape{8, 8, 3}));
  EXPECT_EQ(r.model->output_shape(), (Shape{3}));
  ASSERT_EQ(r.model->layers().size(), 7u);  // input_1 + six layers
  EXPECT_EQ(r.model->layers()[0]->name(), "input_1");
  EXPECT_EQ(r.model->count_params(), (3 * 9 * 4 + 4) + (4 * 9 * 4 + 4) + (3 * 4 + 4) + (4 * 3 + 3));
  EXPECT_FALSE(r.model->is_chain());
  auto x = at::randn({2, 3, 8, 8});
  r.model->eval();
  const at::Tensor expected =
      r.head->forward(r.gap->forward(r.add->forward_multi({r.b->forward(r.a->forward(x)), r.shortcut->forward(x)})));
  EXPECT_TRUE(at::allclose(r.model->forward(x), expected, 1e-5, 1e-6));
  r.model->set_memory_format("contiguous");
  EXPECT_TRUE(at::allclose(r.model->forward(x), expected, 1e-5, 1e-6));
  const at::Tensor logits = r.model->forward_logits(x);
  EXPECT_TRUE(at::allclose(logits.softmax(1), expected, 1e-5, 1e-6));
}

TEST(Model, SharedLayerKeepsOneSetOfWeightsAndSeveralInputsAndOutputsRun) {
  at::manual_seed(4);
  Dense shared(DenseOptions(2).name("shared"));
  auto x1 = Input({5}, "left");
  auto x2 = Input({5}, "right");
  auto y1 = shared->call(x1);
  auto y2 = shared->call(x2);
  auto diff = Subtract()->call({y1, y2});
  Model model({x1, x2}, {diff, y1}, "siamese");
  EXPECT_EQ(model->count_params(), 5 * 2 + 2);
  EXPECT_EQ(model->parameters().size(), 2u);
  EXPECT_EQ(shared->call_count(), 2);
  auto a = at::randn({3, 5}), b = at::randn({3, 5});
  auto out = model->forward_multi({a, b});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(at::allclose(out[0], shared->forward(a) - shared->forward(b)));
  EXPECT_TRUE(at::allclose(out[1], shared->forward(a)));
  EXPECT_NE(config_error_of([&] { model->forward(a); }).find("has 2 inputs and 2 outputs"), std::string::npos);
  const std::string summary = model->summary();
  EXPECT_NE(summary.find("shared (Dense)                  multiple             12          left[0][0]"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("right[0][0]"), std::string::npos) << summary;
  // JSON: the shared layer is written once with two inbound nodes, and read back shared.
  const auto json = model->to_json();
  Model back = model_from_json(json);
  EXPECT_EQ(back->to_json(), json);
  EXPECT_EQ(back->count_params(), 12);
}

// The README's functional example, line for line; parameter counts by hand: Conv2D 3·3·3·16 + 16 = 448,
// Conv2D 3·3·16·16 + 16 = 2,320, BatchNormalization 4·16 = 64 (32 moving statistics), the 1×1 branch
// 3·8 + 8 = 32, Dense (16 + 8)·10 + 10 = 250.
TEST(Model, ReadmeFunctionalExampleBuildsTheGraphItDescribes) {
  KerasTensor inputs = Input({32, 32, 3});
  KerasTensor x = Conv2D(Conv2DOptions(16, 3).padding("same").activation("relu"))->call(inputs);
  KerasTensor y = BatchNormalization()->call(Conv2D(Conv2DOptions(16, 3).padding("same"))->call(x));
  x = Activation(ActivationOptions("relu"))->call(Add()->call({x, y}));
  x = Concatenate()->call({x, Conv2D(Conv2DOptions(8, 1))->call(inputs)});
  KerasTensor outputs = Dense(DenseOptions(10).activation("softmax"))->call(GlobalAveragePooling2D()->call(x));
  Model model({inputs}, {outputs}, "small_resnet");
  EXPECT_EQ(model->count_params(), 448 + 2320 + 64 + 32 + 250);
  EXPECT_EQ(model->non_trainable_params(), 32);
  EXPECT_EQ(x.shape(), (Shape{32, 32, 24}));
  model->eval();
  at::Tensor p = model->forward(at::rand({2, 3, 32, 32}));
  EXPECT_EQ(p.sizes(), at::IntArrayRef({2, 10}));
  EXPECT_TRUE(at::allclose(p.sum(1), at::ones({2})));
}

TEST(Model, RefusesDanglingUnusedAndDuplicateInputsAndNames) {
  auto x = Input({4}, "x");
  auto other = Input({4}, "other");
  auto y = Dense(DenseOptions(2).name("d"))->call(other);
  EXPECT_NE(config_error_of([&] { Model({x}, {y}); })
                .find("graph disconnected: layer 'd' (Dense) reads input 'other' (None, 4), which is not among the "
                      "model's inputs (x)"),
            std::string::npos);
  EXPECT_NE(config_error_of([&] {
              Model({x, other}, {y});
            }).find("input 'x' (None, 4) is not used by any output"),
            std::string::npos);
  EXPECT_NE(config_error_of([&] {
              Model({other, other}, {y});
            }).find("input 'other' is given twice"),
            std::string::npos);
  auto z = Dense(DenseOptions(2).name("d"))->call(y);
  EXPECT_NE(config_error_of([&] { Model({other}, {z}); }).find("two different layers are named 'd'"),
            std::string::npos);
  EXPECT_NE(config_error_of([&] { Model({}, {y}); }).find("needs at least one input and one output"),
            std::string::npos);
  // Calling a built layer on another shape names the layer and both shapes.
  Dense d(DenseOptions(2).name("dd"));
  d->call(Input({4}));
  EXPECT_NE(config_error_of([&] {
              d->call(Input({6}));
            }).find("layer 'dd' (Dense) was built for input (None, 4) and cannot be rebuilt for (None, 6)"),
            std::string::npos);
  EXPECT_NE(config_error_of([&] {
              Add(MergeOptions().name("a"))->call({Input({3}), Input({4})});
            }).find("layer 'a' (Add): inputs with shapes (None, 3), (None, 4) cannot be merged"),
            std::string::npos);
}

TEST(Model, RefusesACycleInAJsonGraph) {
  const nlohmann::json json = {
      {"class_name", "Functional"},
      {"config",
       {{"name", "loop"},
        {"layers",
         {{{"class_name", "InputLayer"},
           {"name", "in"},
           {"config", {{"name", "in"}, {"batch_input_shape", {nullptr, 3}}}},
           {"inbound_nodes", nlohmann::json::array()}},
          {{"class_name", "Add"},
           {"name", "a"},
           {"config", {{"name", "a"}}},
           {"inbound_nodes", {{{"in", 0, 0, nlohmann::json::object()}, {"b", 0, 0, nlohmann::json::object()}}}}},
          {{"class_name", "Dense"},
           {"name", "b"},
           {"config", {{"name", "b"}, {"units", 3}}},
           {"inbound_nodes", {{{"a", 0, 0, nlohmann::json::object()}}}}}}},
        {"input_layers", {{"in", 0, 0}}},
        {"output_layers", {{"b", 0, 0}}}}}};
  EXPECT_NE(config_error_of([&] { model_from_json(json); }).find("the inputs of layer(s) a, b never become available"),
            std::string::npos);
}

// in (3) → d (Dense 2), with d's inbound node and the output reference as given.
nlohmann::json two_layer_graph(const nlohmann::json& d_inbound, const nlohmann::json& output = {"d", 0, 0}) {
  return {{"class_name", "Functional"},
          {"config",
           {{"name", "g"},
            {"layers",
             {{{"class_name", "InputLayer"},
               {"name", "in"},
               {"config", {{"name", "in"}, {"batch_input_shape", {nullptr, 3}}}},
               {"inbound_nodes", nlohmann::json::array()}},
              {{"class_name", "Dense"},
               {"name", "d"},
               {"config", {{"name", "d"}, {"units", 2}}},
               {"inbound_nodes", d_inbound}}}},
            {"input_layers", {{"in", 0, 0}}},
            {"output_layers", {output}}}}};
}

TEST(Model, JsonReferencesAreCheckedAndErrorsNameTheLayerAndReference) {
  const auto ref = [](const nlohmann::json& node, const nlohmann::json& tensor) {
    return nlohmann::json::array(
        {nlohmann::json::array({nlohmann::json::array({"in", node, tensor, nlohmann::json::object()})})});
  };
  EXPECT_EQ(model_from_json(two_layer_graph(ref(0, 0)))->count_params(), 8);  // the well-formed graph builds
  for (const auto& bad : {ref(-1, 0), ref(4000000000LL, 0), ref(0, -1)}) {
    EXPECT_NE(
        config_error_of([&] { model_from_json(two_layer_graph(bad)); }).find("layer 'd' (Dense): bad tensor reference"),
        std::string::npos)
        << bad.dump();
  }
  EXPECT_NE(config_error_of([&] {
              model_from_json(two_layer_graph(ref(0, 3)));
            }).find("names output 3 of layer 'in', which has one output"),
            std::string::npos);
  EXPECT_NE(config_error_of([&] {
              model_from_json(two_layer_graph(ref(0, 0), {"d", -1, 0}));
            }).find("bad tensor reference"),
            std::string::npos);
  EXPECT_NE(config_error_of([&] {
              model_from_json(two_layer_graph(ref(1, 0)));
            }).find("layer 'd' (Dense) reads node 1 of layer 'in', which is never made (1 node(s)"),
            std::string::npos);
  nlohmann::json missing = ref(0, 0);
  missing[0][0][0] = "nope";
  EXPECT_NE(config_error_of([&] {
              model_from_json(two_layer_graph(missing));
            }).find("layer 'd' (Dense) reads layer 'nope', which the model does not have"),
            std::string::npos);
  nlohmann::json twice = ref(0, 0);
  twice[0].push_back(twice[0][0]);
  EXPECT_NE(
      config_error_of([&] { model_from_json(two_layer_graph(twice)); }).find("layer 'd' (Dense): takes one input"),
      std::string::npos);
  EXPECT_NE(config_error_of([&] {
              model_from_json(two_layer_graph("in"));
            }).find("layer 'd' (Dense): inbound_nodes must be a list"),
            std::string::npos);
  nlohmann::json no_outputs = two_layer_graph(ref(0, 0));
  no_outputs["config"].erase("output_layers");
  EXPECT_NE(config_error_of([&] { model_from_json(no_outputs); }).find("needs config.output_layers"),
            std::string::npos);
}

TEST(Model, SequentialIsAChainModel) {
  Sequential s;
  s->add(Dense(DenseOptions(4).activation("relu").input_shape(Shape{3})));
  s->add(Dense(DenseOptions(2)));
  EXPECT_TRUE(s->is_chain());
  EXPECT_EQ(s->layers().size(), 2u);
  Model m = s;
  EXPECT_EQ(m->count_params(), 4 * 3 + 4 + 4 * 2 + 2);
  EXPECT_EQ(m->summary(), s->summary());
  EXPECT_NE(
      m->summary().find("Model: \"sequential\"\n_________________________________________________________________\n"),
      std::string::npos);
  EXPECT_EQ(m->to_json().at("class_name"), "Sequential");
}

TEST(Model, JsonRoundTripKeepsTheGraphAndTheOutputs) {
  at::manual_seed(5);
  Residual r;
  const auto json = r.model->to_json();
  EXPECT_EQ(json.at("class_name"), "Functional");
  EXPECT_EQ(json.at("config").at("input_layers"), nlohmann::json::parse(R"([["input_1", 0, 0]])"));
  EXPECT_EQ(json.at("config").at("layers")[4].at("inbound_nodes"),
            nlohmann::json::parse(R"([[["conv2d_1", 0, 0, {}], ["conv2d_2", 0, 0, {}]]])"));
  Model back = model_from_json_text(json.dump());
  EXPECT_EQ(back->to_json(), json);
  {
    at::NoGradGuard g;
    auto dst = back->named_parameters();
    for (const auto& p : r.model->named_parameters()) dst[p.key()].copy_(p.value());
  }
  auto x = at::randn({2, 3, 8, 8});
  EXPECT_TRUE(at::equal(back->forward(x), r.model->forward(x)));
  EXPECT_EQ(back->summary(), r.model->summary());
}

TEST(Model, FunctionalSummaryFollowsKerasLayout) {
  Residual r;
  const std::string s = r.model->summary();
  const std::string rule(98, '_');
  const std::string expected_head =
      "Model: \"residual\"\n" + rule + "\n" +
      "Layer (type)                    Output Shape         Param #     Connected to                     \n" +
      std::string(98, '=') + "\n" +
      "input_1 (InputLayer)            [(None, 8, 8, 3)]    0                                            \n" + rule +
      "\n" + "conv2d (Conv2D)                 (None, 8, 8, 4)      112         input_1[0][0]                    \n";
  EXPECT_EQ(s.substr(0, expected_head.size()), expected_head) << s;
  EXPECT_NE(
      s.find("add (Add)                       (None, 8, 8, 4)      0           conv2d_1[0][0]                   \n"
             "                                                                 conv2d_2[0][0]                   \n"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("Total params: 291\nTrainable params: 291\nNon-trainable params: 0\n" + rule + "\n"),
            std::string::npos)
      << s;
}

TEST(Model, FrozenLayersGetNoUpdateAndFrozenBatchNormUsesMovingStatistics) {
  at::manual_seed(6);
  auto x = Input({4});
  Dense first(DenseOptions(6).activation("relu").name("first"));
  BatchNormalization bn(BatchNormalizationOptions().name("bn"));
  Dense last(DenseOptions(2).activation("softmax").name("last"));
  Model model({x}, {last->call(bn->call(first->call(x)))}, "frozen");
  first->set_trainable(false);
  bn->set_trainable(false);
  EXPECT_EQ(model->trainable_params(), 6 * 2 + 2);
  EXPECT_EQ(model->non_trainable_params(), 4 * 6 + 6 + 4 * 6);
  EXPECT_NE(model->summary().find("Non-trainable params: 54"), std::string::npos);
  const at::Tensor w_before = first->kernel.clone(), bn_before = bn->moving_mean.clone();
  const at::Tensor last_before = last->kernel.clone();
  Trainer t(model, CompileOptions().loss("categorical_crossentropy").optimizer(OptimizerOptions().name("adam")));
  auto data_x = at::randn({16, 4});
  auto data_y = at::one_hot(at::arange(16) % 2, 2).to(at::kFloat);
  data::TensorIterator it(data_x, data_y, 8);
  FitOptions fo;
  fo.epochs(1).verbose(0);
  t.fit(it, fo);
  EXPECT_TRUE(at::equal(first->kernel, w_before));
  EXPECT_TRUE(at::equal(bn->moving_mean, bn_before));  // inference mode: no moving-statistics update
  EXPECT_FALSE(at::equal(last->kernel, last_before));
  // Unfreezing restores trainable weights (the moving statistics stay non-trainable).
  bn->set_trainable(true);
  EXPECT_TRUE(bn->gamma.requires_grad());
  EXPECT_FALSE(bn->moving_mean.requires_grad());
}

TEST(Model, FrozenLayersKeepTheirWeightsUnderDecoupledWeightDecay) {
  // Keras's optimizers decay only the variables they update (trainable ones): --freeze-base with
  // --weight-decay must leave the base alone.
  at::manual_seed(6);
  auto x = Input({4});
  Dense first(DenseOptions(6).activation("relu").name("first"));
  Dense last(DenseOptions(2).activation("softmax").name("last"));
  Model model({x}, {last->call(first->call(x))}, "decayed");
  first->set_trainable(false);
  const at::Tensor w_before = first->kernel.clone(), last_before = last->kernel.clone();
  Trainer t(
      model,
      CompileOptions().loss("categorical_crossentropy").optimizer(OptimizerOptions().name("sgd").weight_decay(0.5)));
  data::TensorIterator it(at::randn({16, 4}), at::one_hot(at::arange(16) % 2, 2).to(at::kFloat), 8);
  FitOptions fo;
  fo.epochs(1).verbose(0);
  t.fit(it, fo);
  EXPECT_TRUE(at::equal(first->kernel, w_before));
  EXPECT_FALSE(at::equal(last->kernel, last_before));
}

TEST(Model, WithNewHeadReadsWhatTheOldDenseReadAndSharesTheBase) {
  at::manual_seed(9);
  auto x = Input({4});
  Dense hidden(DenseOptions(6).activation("relu").name("hidden"));
  Dense logits(DenseOptions(3).name("logits"));
  Activation soft(ActivationOptions("softmax").name("soft"));
  auto h = hidden->call(x);
  Model base({x}, {soft->call(logits->call(h))}, "base");
  // The output is Activation(softmax) after a Dense: both are the head; the new Dense reads `hidden`.
  Model tuned = with_new_head(base, 5);
  EXPECT_EQ(tuned->output_shape(), (Shape{5}));
  auto head = std::dynamic_pointer_cast<DenseImpl>(tuned->get_layer("new_head"));
  ASSERT_TRUE(head);
  EXPECT_EQ(head->kernel.sizes(), (at::IntArrayRef{5, 6}));
  EXPECT_EQ(tuned->output_activation(), "softmax");
  EXPECT_EQ(tuned->get_layer("hidden").get(), hidden.ptr().get());  // shared, not copied
  EXPECT_THROW(tuned->get_layer("logits"), ConfigError);
  // Keras's numbers: softmax(relu(x W1 + b1) W2 + b2) with the new head's weights.
  at::NoGradGuard no_grad;
  tuned->eval();
  const auto in = at::randn({2, 4});
  const auto want =
      at::softmax(at::relu(in.matmul(hidden->kernel.t()) + hidden->bias).matmul(head->kernel.t()) + head->bias, 1);
  EXPECT_TRUE(at::allclose(tuned->forward(in), want, 1e-6, 1e-6));
  EXPECT_EQ(freeze_all_but_head(*tuned), 1);
  EXPECT_FALSE(hidden->trainable());
  EXPECT_TRUE(head->trainable());
  EXPECT_EQ(tuned->trainable_params(), 5 * 6 + 5);
  // No Dense head: an error naming the output layer.
  Activation soft2(ActivationOptions("softmax").name("soft2"));
  Model no_dense({x}, {soft2->call(x)}, "nodense");
  EXPECT_NE(config_error_of([&] { with_new_head(no_dense, 2); }).find("output layer 'soft2' (Activation)"),
            std::string::npos);
  auto y = Input({2, 2, 1});
  Model bare({y}, {Flatten(FlattenOptions().name("f"))->call(y)}, "bare");
  EXPECT_NE(config_error_of([&] { with_new_head(bare, 2); }).find("'f' (Flatten) is not a Dense layer"),
            std::string::npos);
}

TEST(Model, ReadsTfKeras24ResNet8Architecture) {
  const std::string path = shared_file("resnet8_cifar10_tfkeras240.h5");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "../shared/keras_models is absent (" << path << ")";
  const std::string text = keras_h5_config(path);
  if (text.empty()) GTEST_SKIP() << "/usr/bin/python3 with h5py could not read " << path;
  auto json = nlohmann::json::parse(text);
  Model model = model_from_json(json);
  EXPECT_EQ(model->count_params(), 78666);
  EXPECT_EQ(model->non_trainable_params(), 480);
  EXPECT_EQ(model->input_shape(), (Shape{32, 32, 3}));
  EXPECT_EQ(model->output_shape(), (Shape{10}));
  const std::string s = model->summary();
  EXPECT_NE(s.find("Total params: 78,666\nTrainable params: 78,186\nNon-trainable params: 480\n"), std::string::npos)
      << s;
  EXPECT_NE(
      s.find("add (Add)                       (None, 32, 32, 16)   0           activation[0][0]                 \n"
             "                                                                 batch_normalization_2[0][0]      \n"),
      std::string::npos)
      << s;
  model->eval();
  EXPECT_EQ(model->forward(at::randn({2, 3, 32, 32})).sizes(), (at::IntArrayRef{2, 10}));
  // The file's L2(1e-4) kernel regularizers are kept and written back.
  const auto& regs = model->get_layer("conv2d")->regularizers();
  ASSERT_EQ(regs.count("kernel"), 1u);
  EXPECT_NEAR(regs.at("kernel").l2, 1e-4, 1e-9);  // the file stores float32 1e-4
  Model back = model_from_json(model->to_json());
  EXPECT_EQ(back->count_params(), 78666);
  EXPECT_EQ(back->to_json(), model->to_json());
}

TEST(Model, ReadsKeras1SequentialArchitecture) {
  const std::string path = shared_file("mnist_cnn_keras1_th_arch.json");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "../shared/keras_models is absent (" << path << ")";
  std::ifstream f(path);
  Model model = model_from_json(nlohmann::json::parse(f));
  EXPECT_EQ(model->input_shape(), (Shape{28, 28, 1}));  // Keras 1 "th" (1, 28, 28) read as (H, W, C)
  EXPECT_EQ(model->layers()[0]->class_name(), "Conv2D");
  EXPECT_GT(model->count_params(), 0);
}

TEST(Model, ReadsKeras3Functional) {
  const std::string path = shared_file("seq_cnn_mnist_keras3151.keras");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "../shared/keras_models is absent (" << path << ")";
  std::string text;
  const std::string cmd =
      "/usr/bin/python3 -c \"import zipfile,sys; sys.stdout.write(zipfile.ZipFile(sys.argv[1])"
      ".read('config.json').decode())\" '" +
      path + "' 2>/dev/null";
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    pclose(p);
  }
  if (text.empty()) GTEST_SKIP() << "/usr/bin/python3 could not read " << path;
  Model model = model_from_json_text(text, path);
  EXPECT_GT(model->count_params(), 0);
  EXPECT_EQ(model->output_shape().size(), 1u);
}

TEST(Model, UnsupportedKerasObjectsAreErrorsNamingLayerAndClass) {
  nlohmann::json seq = {
      {"class_name", "Sequential"},
      {"config", {{"name", "s"}, {"layers", {{{"class_name", "ConvLSTM2D"}, {"config", {{"name", "c3"}}}}}}}}};
  EXPECT_NE(config_error_of([&] { model_from_json(seq); })
                .find("config.layers[0] ('c3', ConvLSTM2D): unknown layer class 'ConvLSTM2D': torchfit has no "
                      "ConvLSTM2D yet"),
            std::string::npos);
  seq["config"]["layers"] = {{{"class_name", "Lambda"}, {"config", {{"name", "lam"}}}}};
  EXPECT_NE(
      config_error_of([&] { model_from_json(seq); })
          .find("('lam', Lambda): unknown layer class 'Lambda': a Lambda layer holds Python code or TensorFlow "
                "operations, which torchfit cannot run: write it as a C++ layer registered under this class name"),
      std::string::npos);
  seq["config"]["layers"] = {
      {{"class_name", "Dense"},
       {"config",
        {{"name", "d"},
         {"units", 2},
         {"batch_input_shape", {nullptr, 3}},
         {"kernel_regularizer", {{"class_name", "OrthogonalRegularizer"}, {"config", {{"factor", 0.1}}}}}}}}};
  EXPECT_NE(config_error_of([&] {
              model_from_json(seq);
            }).find("('d', Dense): kernel_regularizer OrthogonalRegularizer is not supported (L1, L2, L1L2)"),
            std::string::npos);
  seq["config"]["layers"][0]["config"].erase("kernel_regularizer");
  seq["config"]["layers"][0]["config"]["dtype"] = "float64";
  EXPECT_NE(config_error_of([&] { model_from_json(seq); }).find("('d', Dense): dtype \"float64\" is not supported"),
            std::string::npos);
  seq["config"]["layers"][0]["config"]["dtype"] = "float32";
  EXPECT_EQ(model_from_json(seq)->input_shape(), (Shape{3}));
}

TEST(Model, KerasArgumentsWithoutEffectAreDroppedAndOthersRefused) {
  // One layer after a (None, 4, 4, 2) input, as tf.keras 2.x / Keras 3 write it.
  auto seq = [](const nlohmann::json& cls, nlohmann::json config) {
    config["name"] = "x";
    return nlohmann::json{
        {"class_name", "Sequential"},
        {"config",
         {{"name", "s"},
          {"layers",
           {{{"class_name", "InputLayer"}, {"config", {{"name", "in"}, {"batch_input_shape", {nullptr, 4, 4, 2}}}}},
            {{"class_name", cls}, {"config", config}}}}}}};
  };
  EXPECT_EQ(model_from_json(seq("GlobalAveragePooling2D", {{"keepdims", false}}))->output_shape(), (Shape{2}));
  // keepdims true keeps the pooled axes (Keras (1, 1, C)).
  EXPECT_EQ(model_from_json(seq("GlobalMaxPooling2D", {{"keepdims", true}}))->output_shape(), (Shape{1, 1, 2}));
  Model bn = model_from_json(seq(
      "BatchNormalization",
      {{"axis", {3}}, {"fused", true}, {"renorm", false}, {"renorm_clipping", nullptr}, {"center", 0}, {"scale", 1}}));
  EXPECT_FALSE(bn->get_layer("x")->config()["center"].get<bool>());
  EXPECT_TRUE(bn->get_layer("x")->config()["scale"].get<bool>());
  EXPECT_NE(config_error_of([&] {
              model_from_json(seq("BatchNormalization", {{"renorm", true}}));
            }).find("renorm true"),
            std::string::npos);
  // Any one axis, resolved against the (None, 4, 4, 2) input as Keras does: 1 is the height (4 statistics).
  EXPECT_EQ(model_from_json(seq("BatchNormalization", {{"axis", 1}}))->get_layer("x")->count_params(), 16);
  EXPECT_NE(config_error_of([&] {
              model_from_json(seq("BatchNormalization", {{"axis", {4}}}));
            }).find("axis [4]: 4 is outside the input (None, 4, 4, 2)"),
            std::string::npos);
  Model leaky = model_from_json(seq("LeakyReLU", {{"negative_slope", 0.2}}));  // Keras 3's name of alpha
  EXPECT_DOUBLE_EQ(leaky->get_layer("x")->config()["alpha"].get<double>(), 0.2);
  EXPECT_EQ(model_from_json(seq("MaxPool2D", {{"pool_size", {2, 2}}}))->get_layer("x")->class_name(), "MaxPooling2D");
}

TEST(Model, WeightRegularizersAddKerasPenaltyToTheLoss) {
  at::manual_seed(8);
  Dense d(DenseOptions(3).name("d").input_shape(Shape{4}));
  d->set_regularizer("kernel", {0.0, 0.5});
  d->set_regularizer("bias", {0.25, 0.0});
  Sequential s;
  s->add(d);
  {
    at::NoGradGuard g;
    d->bias.fill_(-2.0);
  }
  // Keras: L2(0.5) = 0.5·Σw², L1(0.25) = 0.25·Σ|b| (keras/regularizers.py).
  double expected = 0.25 * 3 * 2.0;
  auto k = d->kernel.contiguous();
  for (int64_t i = 0; i < k.numel(); ++i) expected += 0.5 * std::pow(k.view(-1)[i].item<double>(), 2);
  EXPECT_NEAR(s->regularization_loss().item<double>(), expected, 1e-5);
  const auto c = d->config();
  EXPECT_EQ(c.at("kernel_regularizer"), nlohmann::json::parse(R"({"class_name": "L2", "config": {"l2": 0.5}})"));
  EXPECT_EQ(c.at("bias_regularizer"), nlohmann::json::parse(R"({"class_name": "L1", "config": {"l1": 0.25}})"));
  auto back = layer_from_json(layer_to_json(*d));
  EXPECT_EQ(back->config(), c);
}
