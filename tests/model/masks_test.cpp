// Keras masks through a Model (Embedding mask_zero, Masking → the layers that take them): against
// TensorFlow.js (the recurrent layers, Bidirectional, TimeDistributed, merges: same weights, same inputs), the
// NumPy attention reference written from Keras's source (MultiHeadAttention, Attention), and Keras's formulas
// computed here on the kept steps (GlobalAveragePooling1D, BatchNormalization, the loss).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_save.h>
#include <torchfit/layers/attention.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/layers/bidirectional.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/embedding.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/global_pooling2d.h>
#include <torchfit/layers/gru.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/lstm.h>
#include <torchfit/layers/masking.h>
#include <torchfit/layers/merge.h>
#include <torchfit/layers/multi_head_attention.h>
#include <torchfit/layers/registry.h>
#include <torchfit/layers/simple_rnn.h>
#include <torchfit/layers/time_distributed.h>
#include <torchfit/model/model.h>
#include <torchfit/saving/onnx.h>
#include <torchfit/training/losses.h>

#include "support/error_message.h"
#include "support/keras_reference.h"
#include "support/onnx_models.h"
#include "support/temp_dir.h"
#include "support/tfjs_reference.h"

using namespace torchfit;
using Json = nlohmann::json;
using torchfit::testing::tensor_json;

namespace {

// Index sequences (3, 6) with padding at the end, at the start and in between (0 = padding).
at::Tensor padded_indices() {
  return at::tensor({3, 4, 5, 0, 0, 0, 0, 0, 2, 7, 1, 9, 1, 0, 4, 0, 6, 0}, at::kFloat).reshape({3, 6});
}

// Sequences (2, 5, 3) whose steps `zero` (row, step) are all zeros (Masking's padding).
at::Tensor padded_sequences(uint64_t seed, const std::vector<std::pair<int64_t, int64_t>>& zero) {
  at::manual_seed(seed);
  at::Tensor x = at::rand({2, 5, 3}) + 0.1;
  for (auto [r, s] : zero) x[r][s].zero_();
  return x;
}

Model emb_lstm() {
  KerasTensor x = Input({6}, "tokens");
  KerasTensor y = Embedding(EmbeddingOptions(10, 4).mask_zero(true))->call(x);
  y = LSTM(LSTMOptions(5))->call(y);
  return Model({x}, {Dense(DenseOptions(3))->call(y)}, "emb_lstm");
}

}  // namespace

TEST(Masks, TensorFlowJsComputesTheMaskedRecurrentModelsAsTorchfit) {
  const at::Tensor tokens = padded_indices();
  const at::Tensor seqs = padded_sequences(4, {{0, 3}, {0, 4}, {1, 0}, {1, 2}});
  std::map<std::string, std::pair<Model, at::Tensor>> cases;
  cases.emplace("emb_lstm", std::make_pair(emb_lstm(), tokens));
  {
    KerasTensor x = Input({5, 3});
    KerasTensor y = Masking()->call(x);
    y = Bidirectional(BidirectionalOptions(SimpleRNN(SimpleRNNOptions(4).return_sequences(true))))->call(y);
    y = LSTM(LSTMOptions(3).go_backwards(true))->call(y);
    cases.emplace("masking_bidirectional", std::make_pair(Model({x}, {y}, "masking_bidirectional"), seqs));
  }
  {
    KerasTensor x = Input({6});
    KerasTensor y = Embedding(EmbeddingOptions(10, 4).mask_zero(true))->call(x);
    y = GRU(GRUOptions(4).reset_after(false).return_sequences(true))->call(y);
    y = TimeDistributed(TimeDistributedOptions(Dense(DenseOptions(2))))->call(y);
    cases.emplace("emb_gru_time_distributed", std::make_pair(Model({x}, {y}, "emb_gru_td"), tokens));
  }
  {
    // (TensorFlow.js 4.22 cannot run a merge of masked sequences: "Operands could not be broadcast".)
    KerasTensor x = Input({5, 3});
    KerasTensor y = LSTM(LSTMOptions(3).return_sequences(true))->call(Masking()->call(x));
    y = Dense(DenseOptions(4).activation("relu"))->call(y);  // passes the mask on
    y = GRU(GRUOptions(2).reset_after(false))->call(y);
    cases.emplace("masked_dense_gru", std::make_pair(Model({x}, {y}, "masked_dense_gru"), seqs));
  }
  torchfit::testing::TempDir dir("masks_tfjs");
  for (auto& [name, c] : cases) {
    SCOPED_TRACE(name);
    auto& [model, x] = c;
    torchfit::testing::randomize_weights(model, 9);
    keras::save_tfjs_model(*model, dir.file(name));
    std::string skip;
    const at::Tensor want = torchfit::testing::tfjs_prediction(dir.file(name), x, skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
    const at::Tensor got = model->forward(x);
    if (want.defined()) torchfit::testing::expect_matches_reference(got.to(at::kDouble), want, 1e-5);
    EXPECT_TRUE(model->carries_masks());
  }
}

TEST(Masks, ARecurrentLayerSkipsMaskedStepsAndPassesTheMaskOnWithReturnSequences) {
  // Padding at the end: the last output is the one after the last kept step, as a shorter sequence gives.
  Model model = emb_lstm();
  torchfit::testing::randomize_weights(model, 2);
  const at::Tensor full = model->forward(at::tensor({3, 4, 5, 0, 0, 0}, at::kFloat).reshape({1, 6}));
  KerasTensor x = Input({3});
  KerasTensor y = model->get_layer("embedding")->call(x);
  y = model->get_layer("dense")->call(model->get_layer("lstm")->call(y));
  Model shorter({x}, {y}, "shorter");
  torchfit::testing::expect_matches_reference(full, shorter->forward(at::tensor({3, 4, 5}, at::kFloat).reshape({1, 3})),
                                              1e-6);
  EXPECT_FALSE(model->output_masks().at(0).defined());  // LSTM without return_sequences: no mask
  auto lstm = std::dynamic_pointer_cast<RecurrentLayer>(model->get_layer("lstm"));
  const std::string msg = torchfit::testing::error_message<ConfigError>([&] {
    lstm->forward_masked({at::zeros({1, 3, 4})}, {at::ones({1, 4}, at::kBool)});
  });
  EXPECT_NE(msg.find("'lstm' (LSTM): its mask must be (N, steps) = (1, 3), got (1, 4)"), std::string::npos) << msg;
}

namespace {

// Random Keras weights (σ 0.5) set into a built layer, named as the attention reference names them.
Json attention_weights(Layer& layer, bool mha) {
  Json req;
  const auto names = layer.keras_weight_names();
  std::vector<at::Tensor> w;
  for (const auto& t : layer.keras_weights()) w.push_back(at::randn(t.sizes()) * 0.5);
  layer.set_keras_weights(w);
  for (size_t i = 0; i < names.size(); ++i) {
    std::string n = names[i];
    if (mha) {
      n.replace(n.find('/'), 1, "_");
      if (n.rfind("attention_output", 0) == 0) n = "output" + n.substr(16);
    }
    req[n] = tensor_json(w[i]);
  }
  return req;
}

}  // namespace

TEST(Masks, TheAttentionLayersTakeTheQueryAndValueMasksAsKeras) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(12);
  const at::Tensor q = padded_sequences(5, {{0, 3}, {1, 1}}).narrow(1, 0, 4);
  const at::Tensor v = padded_sequences(6, {{0, 3}, {0, 4}, {1, 0}});
  // Keras's masks of these inputs, written out: the steps that are not all zeros.
  const at::Tensor q_keep = at::tensor({1, 1, 1, 0, 1, 0, 1, 1}, at::kFloat).reshape({2, 4});
  const at::Tensor v_keep = at::tensor({1, 1, 1, 0, 0, 0, 1, 1, 1, 1}, at::kFloat).reshape({2, 5});
  for (const bool mha : {true, false}) {
    SCOPED_TRACE(mha ? "MultiHeadAttention" : "Attention");
    KerasTensor qi = Input({4, 3}), vi = Input({5, 3});
    std::shared_ptr<Layer> layer =
        mha ? std::shared_ptr<Layer>(MultiHeadAttention(MultiHeadAttentionOptions(2, 2)).ptr())
            : std::shared_ptr<Layer>(Attention(AttentionOptions().use_scale(true)).ptr());
    KerasTensor y = layer->call({Masking()->call(qi), Masking()->call(vi)});
    Model model({qi, vi}, {y}, "masked_attention");
    Json req = attention_weights(*layer, mha);
    req["op"] = mha ? "attention_mha" : "attention_dot";
    req["x"] = tensor_json(q);
    req["value"] = tensor_json(v);
    req["use_causal_mask"] = false;
    if (mha) {
      req["key"] = Json();
      req["key_dim"] = 2;
      req["attention_mask"] = tensor_json(q_keep.unsqueeze(2) * v_keep.unsqueeze(1));
    } else {
      req["query_mask"] = tensor_json(q_keep);
      req["value_mask"] = tensor_json(v_keep);
    }
    const at::Tensor got = model->forward_multi({q, v})[0];
    torchfit::testing::expect_matches_reference(got, torchfit::testing::keras_reference(req));
    EXPECT_TRUE(at::equal(model->output_masks()[0], q_keep.to(at::kBool)));  // the query's mask, as Keras
  }
}

TEST(Masks, GlobalAveragePooling1DAveragesTheKeptStepsOnly) {
  KerasTensor x = Input({6});
  auto embedding = Embedding(EmbeddingOptions(10, 4).mask_zero(true));
  KerasTensor y = GlobalAveragePooling1D()->call(embedding->call(x));
  Model model({x}, {y}, "mean_of_words");
  torchfit::testing::randomize_weights(model, 3);
  const at::Tensor got = model->forward(padded_indices());
  const at::Tensor e = embedding->embeddings.detach();
  const at::Tensor want =
      at::stack({(e[3] + e[4] + e[5]) / 3, (e[2] + e[7] + e[1] + e[9]) / 4, (e[1] + e[4] + e[6]) / 3});
  torchfit::testing::expect_matches_reference(got, want, 1e-6);
  EXPECT_FALSE(model->output_masks()[0].defined());
  torchfit::testing::TempDir dir("masks_gap");
  const std::string msg =
      torchfit::testing::error_message<ConfigError>([&] { keras::save_tfjs_model(*model, dir.file("m")); });
  EXPECT_NE(msg.find("(GlobalAveragePooling1D): TensorFlow.js averages every step"), std::string::npos) << msg;
}

TEST(Masks, BatchNormalizationKeepsMaskedStepsOutOfItsTrainingStatistics) {
  KerasTensor x = Input({5, 3});
  auto bn = BatchNormalization(BatchNormalizationOptions().momentum(0.9));
  Model model({x}, {bn->call(Masking()->call(x))}, "masked_bn");
  const at::Tensor seqs = padded_sequences(8, {{0, 1}, {1, 3}, {1, 4}});
  model->train();
  const at::Tensor got = model->forward(seqs);
  // Keras's masked moments on the 7 kept steps: their mean and biased variance per feature.
  const at::Tensor kept = at::cat({seqs[0].index_select(0, at::tensor({0, 2, 3, 4})), seqs[1].narrow(0, 0, 3)});
  const at::Tensor mean = kept.mean(0), var = kept.var(0, /*unbiased=*/false);
  const at::Tensor want = (seqs - mean) / at::sqrt(var + 1e-3);
  torchfit::testing::expect_matches_reference(got.select(0, 0).select(0, 0), want[0][0], 1e-5);
  torchfit::testing::expect_matches_reference(got[1].narrow(0, 0, 3), want[1].narrow(0, 0, 3), 1e-5);
  torchfit::testing::expect_matches_reference(bn->moving_mean.detach(), mean * 0.1, 1e-6);
  torchfit::testing::expect_matches_reference(bn->moving_variance.detach(), 0.9 + var * 0.1, 1e-6);
}

TEST(Masks, TheLossOfAMaskedOutputCountsTheKeptStepsOnly) {
  KerasTensor x = Input({6});
  KerasTensor y = Embedding(EmbeddingOptions(10, 2).mask_zero(true))->call(x);
  y = SimpleRNN(SimpleRNNOptions(1).return_sequences(true))->call(y);
  Model model({x}, {Dense(DenseOptions(1))->call(y)}, "tagger");
  torchfit::testing::randomize_weights(model, 4);
  const at::Tensor out = model->forward(padded_indices());  // (3, 6, 1)
  const at::Tensor mask = model->output_masks()[0];
  ASSERT_TRUE(mask.defined());
  EXPECT_TRUE(at::equal(mask, padded_indices().ne(0)));
  const at::Tensor target = at::ones({3, 6, 1});
  const at::Tensor loss = compute_loss("mean_squared_error", out, target, false, at::Tensor(), mask);
  // Keras 3's apply_mask: Σ over the 10 kept steps / (10 + 1e-7).
  const at::Tensor sq = (out - target).square().squeeze(2);
  const double want = (sq * mask.to(at::kFloat)).sum().item<double>() / (10 + 1e-7);
  EXPECT_NEAR(loss.item<double>(), want, 1e-6);
  const std::string msg = torchfit::testing::error_message<ConfigError>(
      [&] { compute_loss("mean_squared_error", out, target, false, at::Tensor(), mask.narrow(1, 0, 5)); });
  EXPECT_NE(msg.find("the output's mask (3, 5) does not fit its values (3, 6)"), std::string::npos) << msg;
}

TEST(Masks, OnnxRefusesAModelWhoseMaskReachesALayerThatComputesWithIt) {
  const std::string msg = torchfit::testing::error_message<ConfigError>([] { saving::onnx_model_bytes(emb_lstm()); });
  EXPECT_NE(msg.find("layer 'lstm' (LSTM) computes with a Keras mask"), std::string::npos) << msg;
  // A mask that stops at Flatten changes no value: the model exports.
  KerasTensor x = Input({6});
  KerasTensor y = Flatten()->call(Embedding(EmbeddingOptions(10, 2).mask_zero(true))->call(x));
  EXPECT_NO_THROW(saving::onnx_model_bytes(Model({x}, {Dense(DenseOptions(2))->call(y)}, "flat")));
}

TEST(Masks, MaskingAndMaskZeroRoundTripTheirKerasConfigs) {
  auto masking = layer_from_json({{"class_name", "Masking"}, {"config", {{"name", "m"}, {"mask_value", -1.0}}}});
  EXPECT_EQ(masking->config().at("mask_value"), -1.0);
  EXPECT_TRUE(masking->makes_mask());
  auto embedding = layer_from_json(
      {{"class_name", "Embedding"}, {"config", {{"input_dim", 5}, {"output_dim", 3}, {"mask_zero", true}}}});
  EXPECT_EQ(embedding->config().at("mask_zero"), true);
  EXPECT_THROW(layer_from_json({{"class_name", "Masking"}, {"config", {{"mask_value", std::nan("")}}}}), ConfigError);
  // Keras forces zero_output_for_mask on a Bidirectional's layers to return_sequences.
  Bidirectional bi(BidirectionalOptions(LSTM(LSTMOptions(2).return_sequences(true))));
  EXPECT_EQ(bi->config().at("layer").at("config").at("zero_output_for_mask"), true);
}

TEST(Masks, MaximumTakesTheOtherInputAtMaskedStepsAndOrsTheMasks) {
  KerasTensor a = Input({5, 3}), b = Input({5, 3});
  auto masking = [](KerasTensor t) { return Masking(MaskingOptions().mask_value(-0.5))->call(t); };
  Model model({a, b}, {Maximum()->call({masking(a), masking(b)})}, "masked_max");
  const at::Tensor xa = padded_sequences(1, {{0, 1}, {1, 4}}) - 0.5, xb = padded_sequences(2, {{0, 1}, {0, 2}}) - 0.5;
  const at::Tensor got = model->forward_multi({xa, xb})[0];
  // The padded steps are −0.5 (mask_value). Keras's _apply_merge_op_and_or_mask, masks ma, mb written out: x = b where
  // mb else a; out = a where ma else x; max(out, x).
  at::Tensor ma = at::ones({2, 5, 1}, at::kBool), mb = at::ones({2, 5, 1}, at::kBool);
  ma[0][1] = false;
  ma[1][4] = false;
  mb[0][1] = false;
  mb[0][2] = false;
  const at::Tensor ya = at::where(ma, xa, at::zeros({})), yb = at::where(mb, xb, at::zeros({}));  // Masking's x·keep
  const at::Tensor x = at::where(mb, yb, ya);
  torchfit::testing::expect_matches_reference(got, at::maximum(at::where(ma, ya, x), x), 1e-7);
  EXPECT_TRUE(at::equal(model->output_masks()[0], (ma | mb).squeeze(2)));
}
