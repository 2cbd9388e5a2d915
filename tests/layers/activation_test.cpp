// Activation and the activation names (layers/activation_fn.h): every name's values and gradients against
// PyTorch-Python's torch.nn.functional (selu from Keras's formula and constants), values at the kinks, the
// Keras 3 hard_sigmoid, the aliases, unknown names, config.
#include <gtest/gtest.h>

#include <torchfit/layers/activation.h>
#include <torchfit/layers/activation_fn.h>

#include "support/layer_checks.h"
#include "support/python_reference.h"

using namespace torchfit;
using torchfit::testing::check_layer;

TEST(Activation, ValuesAndConfig) {
  check_layer(Activation("tanh").ptr(), {3, 3, 2}, {3, 3, 2}, 0);
  check_layer(Activation("hard_silu").ptr(), {3, 3, 2}, {3, 3, 2}, 0);
  check_layer(Activation("log_softmax").ptr(), {5}, {5}, 0);
  Activation soft("softmax");
  soft->build({3});
  auto y = soft->forward(at::tensor({1.0f, 2.0f, 3.0f}).reshape({1, 3}));
  EXPECT_NEAR(y.sum().item<double>(), 1.0, 1e-6);
  const double expected = std::exp(3.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(y[0][2].item<double>(), expected, 1e-6);
  Activation relu("relu");
  relu->build({2});
  EXPECT_TRUE(
      at::equal(relu->forward(at::tensor({-1.0f, 2.0f}).reshape({1, 2})), at::tensor({0.0f, 2.0f}).reshape({1, 2})));
  EXPECT_THROW(Activation("gelu2"), ConfigError);
}

namespace {

// The inputs: the kinks themselves (0, ±3, 6) for the values; points beside them for the gradients (at a
// kink the derivative is a convention: PyTorch's hardswish gives -0.5 at -3, TensorFlow's autodiff 0).
const std::vector<double> kValuePoints = {-25,  -8, -6,  -3.5, -3,  -2.5, -1, -0.5, 0,
                                          0.25, 1,  2.5, 3,    3.5, 5.5,  6,  6.5,  25};
const std::vector<double> kGradientPoints = {-8,   -6.01, -5.99, -3.01, -2.99, -1,  -0.01, 0.01,
                                             0.75, 2.99,  3.01,  5.99,  6.01,  7.5, 15};

// torch.nn.functional for each Keras name (keras/src/activations/activations.py); selu written from Keras's
// source and constants (scale · elu(x, alpha)). softmax/log_softmax over the last axis of (N, D) and over
// dim 1 of (N, C, H, W) ("image" inputs), as Keras's axis -1 on channels-last data.
constexpr const char* kTorchReference = R"(
import torch.nn.functional as F
def selu(x):
    alpha, scale = 1.67326324235437728482, 1.05070098735548049342
    return scale * torch.where(x > 0, x, alpha * (torch.exp(x) - 1))
fns = {
    'linear': lambda x, d: x, 'relu': lambda x, d: F.relu(x), 'relu6': lambda x, d: F.relu6(x),
    'leaky_relu': lambda x, d: F.leaky_relu(x, 0.2), 'elu': lambda x, d: F.elu(x, 1.0),
    'selu': lambda x, d: selu(x), 'gelu': lambda x, d: F.gelu(x), 'silu': lambda x, d: F.silu(x),
    'swish': lambda x, d: F.silu(x), 'hard_sigmoid': lambda x, d: F.hardsigmoid(x),
    'hard_silu': lambda x, d: F.hardswish(x), 'hard_swish': lambda x, d: F.hardswish(x),
    'sigmoid': lambda x, d: torch.sigmoid(x), 'tanh': lambda x, d: torch.tanh(x),
    'softplus': lambda x, d: F.softplus(x), 'softsign': lambda x, d: F.softsign(x), 'mish': lambda x, d: F.mish(x),
    'softmax': lambda x, d: F.softmax(x, dim=d), 'log_softmax': lambda x, d: F.log_softmax(x, dim=d),
    'exponential': lambda x, d: torch.exp(x),
}
out = {}
for name in data['names']:
    f = fns[name]
    r = {}
    for key, dim in (('values', -1), ('grad', -1), ('image', 1)):
        x = torch.tensor(data[key], dtype=torch.float64, requires_grad=True)
        y = f(x, dim)
        (y * torch.tensor(data[key + '_w'], dtype=torch.float64)).sum().backward()
        r[key] = {'y': y.detach().flatten().tolist(), 'dx': x.grad.flatten().tolist()}
    out[name] = r
)";

struct Probe {
  at::Tensor y, dx;
};

// y = f(x) and d Σ(y·w) / dx, float64.
Probe probe(const std::string& name, const at::Tensor& x0, const at::Tensor& w) {
  const at::Tensor x = x0.clone().requires_grad_(true);
  const at::Tensor y = apply_activation(name, x);
  (y * w).sum().backward();
  return {y.detach().flatten(), x.grad().flatten()};
}

at::Tensor from_json(const nlohmann::json& j) { return at::tensor(j.get<std::vector<double>>(), at::kDouble); }

// |a − b| ≤ 1e-10 · max(1, |b|), elementwise.
void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const at::Tensor bound = 1e-10 * at::clamp_min(want.abs(), 1.0);
  const at::Tensor bad = (got - want).abs() > bound;
  EXPECT_FALSE(bad.any().item<bool>()) << what << "\n got " << got << "\n want " << want;
}

}  // namespace

TEST(Activation, EveryNameMatchesPyTorchValuesAndGradients) {
  at::manual_seed(3);
  const at::Tensor values = at::tensor(kValuePoints, at::kDouble).reshape({2, -1});
  const at::Tensor grad = at::tensor(kGradientPoints, at::kDouble).reshape({3, -1});
  const at::Tensor image = at::randn({2, 3, 2, 2}, at::kDouble) * 3;
  const at::Tensor values_w = at::randn_like(values), grad_w = at::randn_like(grad), image_w = at::randn_like(image);
  using torchfit::testing::to_json;
  const auto ref = torchfit::testing::run_python({"torch"}, kTorchReference,
                                                 {{"names", activation_names()},
                                                  {"values", to_json(values)},
                                                  {"values_w", to_json(values_w)},
                                                  {"grad", to_json(grad)},
                                                  {"grad_w", to_json(grad_w)},
                                                  {"image", to_json(image)},
                                                  {"image_w", to_json(image_w)}});
  TORCHFIT_REQUIRE_PYTHON(ref);
  ASSERT_EQ(activation_names().size(), 20u);  // the table of activation_fn.h
  for (const auto& name : activation_names()) {
    const auto& r = ref.out.at(name);
    const Probe v = probe(name, values, values_w), g = probe(name, grad, grad_w), i = probe(name, image, image_w);
    expect_close(v.y, from_json(r["values"]["y"]), name + " values at the kinks");
    expect_close(g.y, from_json(r["grad"]["y"]), name + " values beside the kinks");
    expect_close(g.dx, from_json(r["grad"]["dx"]), name + " gradient");
    expect_close(i.y, from_json(r["image"]["y"]), name + " on an (N, C, H, W) image");
    expect_close(i.dx, from_json(r["image"]["dx"]), name + " gradient on an image");
  }
}

// Keras 3's hard_sigmoid is relu6(x + 3) / 6 (tf.keras 2's was max(0, min(1, 0.2·x + 0.5)): 0.7 at 1, 0 at
// -2.5); hard_silu is x times it; swish and hard_swish are Keras's aliases of silu and hard_silu.
TEST(Activation, HardSigmoidIsKeras3sAndTheAliasesAreKerass) {
  const at::Tensor x = at::tensor({-3.0, -2.5, 0.0, 1.0, 3.0}, at::kDouble).reshape({1, 5});
  const at::Tensor hs = apply_activation("hard_sigmoid", x);
  const std::vector<double> want = {0.0, 0.5 / 6.0, 0.5, 4.0 / 6.0, 1.0};
  for (int i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(hs[0][i].item<double>(), want[static_cast<size_t>(i)]) << i;
  EXPECT_TRUE(at::allclose(apply_activation("hard_silu", x), x * hs, 1e-15, 1e-15));  // rounding order differs
  const at::Tensor r = at::randn({4, 6}, at::kDouble);
  EXPECT_TRUE(at::equal(apply_activation("swish", r), apply_activation("silu", r)));
  EXPECT_TRUE(at::equal(apply_activation("hard_swish", r), apply_activation("hard_silu", r)));
  EXPECT_DOUBLE_EQ(apply_activation("leaky_relu", at::full({1, 1}, -1.0, at::kDouble)).item<double>(), -0.2);
}

TEST(Activation, UnknownNameIsAConfigErrorListingTheKnownNames) {
  // Keras's approximate GELU has no string name: "gelu_approximate" is no activation here either.
  for (const char* bad : {"gelu_approximate", "Relu", "hardsigmoid"}) {
    try {
      Activation a(ActivationOptions(bad).name("act"));
      FAIL() << bad << " accepted";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("layer 'act' (Activation): unknown activation '" + std::string(bad) + "'"), std::string::npos)
          << msg;
      for (const char* known : {"hard_silu", "log_softmax", "mish", "relu6", "selu", "swish"}) {
        EXPECT_NE(msg.find(known), std::string::npos) << msg;
      }
    }
  }
}
