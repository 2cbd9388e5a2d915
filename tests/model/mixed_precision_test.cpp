// Dtype policies (keras.mixed_precision): names, the dtype of each layer's output and of the variables
// under every policy the CPU runs, float32 outputs, summary and JSON, refusals.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include <torchfit/error.h>
#include <torchfit/model/mixed_precision.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/training/trainer.h>

using namespace torchfit;
using mixed_precision::Policy;

namespace {

// Restores the global policy however a test ends.
struct GlobalPolicyGuard {
  Policy saved = mixed_precision::global_policy();
  ~GlobalPolicyGuard() { mixed_precision::set_global_policy(saved); }
};

// The dtype each layer of `model` hands to the next, run as Sequential runs them under `policy`.
std::vector<at::ScalarType> layer_output_dtypes(Sequential& model, const at::Tensor& x) {
  const Policy& policy = model->dtype_policy();
  mixed_precision::AutocastScope autocast(policy, x.device());
  at::Tensor h = policy.is_mixed() ? x.to(policy.compute_dtype()) : x;
  std::vector<at::ScalarType> out;
  for (const auto& layer : model->layers()) {
    h = layer->forward(h);
    out.push_back(h.scalar_type());
  }
  return out;
}

// A model with every built-in layer class (JSON as to_json writes it).
Sequential every_layer_class_model() {
  const auto json = nlohmann::json::parse(R"({"format_version": 1, "class_name": "Sequential", "config": {
    "name": "every_layer", "layers": [
      {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": [3, 3], "activation": "relu",
                                          "input_shape": [14, 14, 3]}},
      {"class_name": "BatchNormalization", "config": {}},
      {"class_name": "DepthwiseConv2D", "config": {"kernel_size": [3, 3], "depth_multiplier": 2}},
      {"class_name": "LeakyReLU", "config": {}},
      {"class_name": "ELU", "config": {}},
      {"class_name": "AveragePooling2D", "config": {"pool_size": [2, 2]}},
      {"class_name": "MaxPooling2D", "config": {"pool_size": [2, 2]}},
      {"class_name": "Activation", "config": {"activation": "tanh"}},
      {"class_name": "Dropout", "config": {"rate": 0.1}},
      {"class_name": "Reshape", "config": {"target_shape": [2, 2, 8]}},
      {"class_name": "GlobalAveragePooling2D", "config": {}},
      {"class_name": "Dense", "config": {"units": 16, "activation": "relu"}},
      {"class_name": "Flatten", "config": {}},
      {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}})");
  return Sequential(SequentialImpl::from_json(json));
}

}  // namespace

TEST(MixedPrecision, PolicyNamesAndDtypesAreKeras) {
  EXPECT_EQ(Policy("float32").compute_dtype(), at::kFloat);
  EXPECT_EQ(Policy("mixed_bfloat16").compute_dtype(), at::kBFloat16);
  EXPECT_EQ(Policy("mixed_float16").compute_dtype(), at::kHalf);
  for (const auto& name : mixed_precision::policy_names()) EXPECT_EQ(Policy(name).variable_dtype(), at::kFloat);
  EXPECT_FALSE(Policy("float32").is_mixed());
  EXPECT_TRUE(Policy("mixed_bfloat16").is_mixed());
  EXPECT_FALSE(Policy("mixed_bfloat16").needs_loss_scaling());
  EXPECT_TRUE(Policy("mixed_float16").needs_loss_scaling());
  try {
    Policy("bfloat16");
    FAIL() << "an unknown policy name was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'bfloat16'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("mixed_bfloat16"), std::string::npos) << e.what();
  }
}

TEST(MixedPrecision, GlobalPolicyIsTakenByModelsCreatedAfterIt) {
  GlobalPolicyGuard guard;
  Sequential before = seed_cnn(32, 3, 8);
  mixed_precision::set_global_policy("mixed_bfloat16");
  Sequential after = seed_cnn(32, 3, 8);
  EXPECT_EQ(before->dtype_policy().name(), "float32");
  EXPECT_EQ(after->dtype_policy().name(), "mixed_bfloat16");
  EXPECT_EQ(mixed_precision::global_policy().name(), "mixed_bfloat16");
  EXPECT_THROW(mixed_precision::set_global_policy("float64"), ConfigError);
  EXPECT_EQ(mixed_precision::global_policy().name(), "mixed_bfloat16");
}

TEST(MixedPrecision, EachLayerOutputIsInTheComputeDtypeAndTheModelOutputFloat32) {
  at::manual_seed(0);
  Sequential model = seed_cnn(32, 3, 8);
  const at::Tensor x = at::rand({2, 3, 32, 32});
  // float32: every layer float32.
  for (auto d : layer_output_dtypes(model, x)) EXPECT_EQ(d, at::kFloat);
  // mixed_bfloat16: every layer's output bf16 (conv2d … dense_2), the model's output float32 softmax.
  model->set_dtype_policy("mixed_bfloat16");
  const auto dtypes = layer_output_dtypes(model, x);
  ASSERT_EQ(dtypes.size(), 10u);
  for (size_t i = 0; i < dtypes.size(); ++i) EXPECT_EQ(dtypes[i], at::kBFloat16) << model->layers()[i]->name();
  model->eval();
  const at::Tensor probabilities = model->forward(x);
  EXPECT_EQ(probabilities.scalar_type(), at::kFloat);
  EXPECT_NEAR(probabilities.sum(1).sub(1).abs().max().item<double>(), 0.0, 1e-6);  // softmax on float32
  EXPECT_EQ(model->forward_logits(x).scalar_type(), at::kFloat);
  for (const auto& p : model->parameters()) EXPECT_EQ(p.scalar_type(), at::kFloat);
  // bf16 agrees with float32 to bf16's precision (8 bits of mantissa).
  model->set_dtype_policy("float32");
  EXPECT_LT((model->forward(x) - probabilities).abs().max().item<double>(), 2e-2);
}

TEST(MixedPrecision, EveryLayerClassTrainsUnderMixedBfloat16WithFloat32VariablesAndGradients) {
  at::manual_seed(1);
  Sequential model = every_layer_class_model();
  model->set_dtype_policy("mixed_bfloat16");
  const auto dtypes = layer_output_dtypes(model, at::rand({4, 3, 14, 14}));
  for (size_t i = 0; i < dtypes.size(); ++i) EXPECT_EQ(dtypes[i], at::kBFloat16) << model->layers()[i]->name();
  Trainer trainer(model, CompileOptions());
  const at::Tensor x = at::rand({4, 3, 14, 14});
  const at::Tensor y = at::one_hot(at::arange(4) % 3, 3).to(at::kFloat);
  const at::Tensor before = model->parameters().front().detach().clone();
  const double loss = trainer.train_step(x, y);
  EXPECT_TRUE(std::isfinite(loss));
  for (const auto& p : model->named_parameters()) {
    EXPECT_EQ(p.value().scalar_type(), at::kFloat) << p.key();
    if (!p.value().requires_grad()) continue;  // BatchNormalization's moving statistics
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_EQ(p.value().grad().scalar_type(), at::kFloat) << p.key();
  }
  for (const auto& b : model->buffers())
    if (at::isFloatingType(b.scalar_type())) EXPECT_EQ(b.scalar_type(), at::kFloat);  // moving mean/variance
  EXPECT_FALSE(at::equal(before, model->parameters().front().detach()));
}

TEST(MixedPrecision, SummaryAndJsonCarryAMixedPolicyAndLeaveFloat32AsKeras) {
  Sequential model = seed_cnn(32, 3, 8);
  const std::string plain = model->summary();
  EXPECT_EQ(plain.find("Dtype policy"), std::string::npos);
  EXPECT_EQ(model->to_json()["config"]["dtype_policy"], "float32");
  {  // a float32 model stays float32 when reloaded under another global policy; a JSON without the field
     // takes the global policy (Keras: a layer config without a dtype)
    GlobalPolicyGuard guard;
    mixed_precision::set_global_policy("mixed_bfloat16");
    EXPECT_EQ(SequentialImpl::from_json(model->to_json())->dtype_policy().name(), "float32");
    auto old = model->to_json();
    old["config"].erase("dtype_policy");
    EXPECT_EQ(SequentialImpl::from_json(old)->dtype_policy().name(), "mixed_bfloat16");
  }
  model->set_dtype_policy("mixed_bfloat16");
  const std::string mixed = model->summary();
  EXPECT_NE(mixed.find("Non-trainable params: 0\nDtype policy: mixed_bfloat16\n"), std::string::npos) << mixed;
  const auto json = model->to_json();
  EXPECT_EQ(json["config"]["dtype_policy"], "mixed_bfloat16");
  EXPECT_EQ(SequentialImpl::from_json(json)->dtype_policy().name(), "mixed_bfloat16");
  auto bad = json;
  bad["config"]["dtype_policy"] = "half";
  EXPECT_THROW(SequentialImpl::from_json(bad), ConfigError);
}

TEST(MixedPrecision, Float16OnTheCpuIsRefusedWithTheReason) {
  Sequential model = seed_cnn(32, 3, 8);
  model->set_dtype_policy("mixed_float16");
  try {
    Trainer trainer(model, CompileOptions());
    FAIL() << "mixed_float16 on the CPU was accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("mixed_float16 on cpu"), std::string::npos) << what;
    EXPECT_NE(what.find("bfloat16 only"), std::string::npos) << what;
  }
  EXPECT_THROW(model->forward(at::rand({1, 3, 32, 32})), ConfigError);  // forward alone refuses too
}

TEST(MixedPrecision, Bfloat16InstructionsAreReadFromTheCpu) {
  // What /proc/cpuinfo says, capped by oneDNN's ISA variable as oneDNN reads it, must be what the library
  // uses to decide whether to warn.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  if (text.empty()) GTEST_SKIP() << "no /proc/cpuinfo";
  const bool listed = text.find(" avx512_bf16") != std::string::npos || text.find(" amx_bf16") != std::string::npos;
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  const bool capped = cap != nullptr && std::string(cap).find("BF16") == std::string::npos &&
                      std::string(cap).find("AMX") == std::string::npos &&
                      std::string(cap).find("AVX10") == std::string::npos && std::string(cap) != "ALL" &&
                      std::string(cap) != "DEFAULT" && !std::string(cap).empty();
  EXPECT_EQ(mixed_precision::cpu_has_bf16_instructions(), listed && !capped)
      << "ONEDNN_MAX_CPU_ISA=" << (cap ? cap : "");
}

TEST(MixedPrecision, OnednnIsaCapsBelowAvx512Bf16RuleOutBfloat16Instructions) {
  // oneDNN's list of ISA values (its docs, "CPU ISA hints and dispatcher controls"), lowest first.
  for (const char* below : {"SSE41", "AVX", "avx2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "avx512_core_vnni"}) {
    EXPECT_FALSE(mixed_precision::onednn_isa_allows_bf16(below)) << below;
  }
  for (const char* from :
       {"AVX512_CORE_BF16", "avx512_core_fp16", "AVX512_CORE_AMX", "AVX10_1_512", "ALL", "DEFAULT", ""}) {
    EXPECT_TRUE(mixed_precision::onednn_isa_allows_bf16(from)) << from;
  }
}
