// Tests of ImageDataGenerator: random draws, the affine resample and nearest loading against
// keras-preprocessing's own results (frozen in tests/data/golden/ by scripts/keras_oracle.py), and
// standardisation order.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <torchfit/data/image.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

#include "support/npy.h"
#include "support/temp_dir.h"

using namespace torchfit::data;
using torchfit::testing::NpyArray;
using torchfit::testing::read_npy;
using torchfit::testing::TempDir;

namespace {

/// A smooth (C=3, H=40, W=48) test image with different gradients per channel, values 0..255.
/// scripts/keras_oracle.py builds the same image (affine_input.npy).
at::Tensor gradient_image() {
  const int h = 40, w = 48;
  at::Tensor t = at::empty({3, h, w}, at::kFloat);
  auto a = t.accessor<float, 3>();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      a[0][y][x] = static_cast<float>(4.0 * y + 2.0 * x);
      a[1][y][x] = static_cast<float>(255.0 - 5.0 * x);
      a[2][y][x] = static_cast<float>(128.0 + 100.0 * std::sin(y / 6.0) * std::cos(x / 7.0));
    }
  return t;
}

/// Path of a file under tests/data/golden/.
std::string golden(const std::string& name) { return std::string(TORCHFIT_SOURCE_DIR) + "/tests/data/golden/" + name; }

/// The golden manifest (keras_oracle.json). Throws (the test fails) when it is missing or unparsable.
nlohmann::json golden_manifest() {
  std::ifstream f(golden("keras_oracle.json"));
  if (!f)
    throw std::runtime_error("missing " + golden("keras_oracle.json") +
                             " (regenerate: /usr/bin/python3 scripts/keras_oracle.py)");
  return nlohmann::json::parse(f);
}

/// An (H, W, C) float32 golden array as a (C, H, W) tensor.
at::Tensor golden_chw(const std::string& name) {
  const NpyArray a = read_npy(golden(name));
  if (a.descr != "<f4" || a.shape.size() != 3) throw std::runtime_error(name + ": expected a float32 (H, W, C) array");
  std::vector<float> v = a.values<float>();
  return at::from_blob(v.data(), a.shape, at::kFloat).clone().permute({2, 0, 1}).contiguous();
}

/// The TransformParams, fill_mode and cval a golden affine case was made with (keras_oracle.json).
struct GoldenAffine {
  std::string name, input, output, fill_mode;
  TransformParams p;
  double cval = 0;
  int order = 1;
};
GoldenAffine golden_affine(const nlohmann::json& c) {
  GoldenAffine g;
  g.name = c.at("name"), g.input = c.at("input"), g.output = c.at("output"), g.fill_mode = c.at("fill_mode");
  g.cval = c.at("cval"), g.order = c.at("order");
  g.p.theta = c.at("theta"), g.p.tx = c.at("tx"), g.p.ty = c.at("ty"), g.p.shear = c.at("shear");
  g.p.zx = c.at("zx"), g.p.zy = c.at("zy");
  g.p.flip_horizontal = c.at("flip_horizontal"), g.p.flip_vertical = c.at("flip_vertical");
  return g;
}

at::Tensor apply_golden(const GoldenAffine& g, const at::Tensor& input) {
  return ImageDataGenerator(
             ImageDataGeneratorOptions().fill_mode(g.fill_mode).cval(g.cval).interpolation_order(g.order))
      .apply_transform(input, g.p);
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

// Keras's apply_affine_transform (scipy.ndimage.affine_transform order 1, + flip_axis), frozen: every
// case of the manifest — rotation, shift, shear, zoom, flips, each fill mode sampled far beyond every
// border with cval 77.5, integer shifts that put points exactly on the borders, Keras's own 3×3 test
// and a ramp shift — must agree over the WHOLE image, borders included, within float rounding. The
// interpolation_order 0 cases (a class-id mask, noise, half-pixel ramp shifts) must be equal: each
// output pixel is one input pixel, so a single index off shows as a whole value.
TEST(ImageDataGeneratorTest, AffineMatchesKerasApplyAffineTransform) {
  const nlohmann::json manifest = golden_manifest();
  const at::Tensor gradient = golden_chw("affine_input.npy");
  ASSERT_EQ(gradient.sizes(), (at::IntArrayRef{3, 40, 48}));
  ASSERT_LE(max_abs_diff(gradient, gradient_image()), 1e-4) << "the script's image is ours";
  std::set<std::string> names;
  for (const auto& c : manifest.at("affine").at("cases")) {
    const GoldenAffine g = golden_affine(c);
    names.insert(g.name);
    const at::Tensor input = golden_chw(g.input), keras = golden_chw(g.output);
    ASSERT_EQ(keras.sizes(), input.sizes()) << g.name;
    const double max = max_abs_diff(apply_golden(g, input), keras);
    std::printf("[ golden   ] %-32s %-8s max |ours - keras| = %.3g (0..255 scale)\n", g.name.c_str(),
                g.fill_mode.c_str(), max);
    EXPECT_LE(max, g.p.affine_is_identity() || g.order == 0 ? 0.0 : 1e-3) << g.name;
  }
  for (const char* n : {"rotation_20",
                        "combined_flips_reflect",
                        "horizontal_flip",
                        "far_nearest",
                        "far_constant",
                        "far_reflect",
                        "far_wrap",
                        "far_wrap_flips",
                        "shift_5_-7_wrap",
                        "shift_5_-7_constant",
                        "keras_test_rotation_45",
                        "ramp_shift_2.5_constant",
                        "ramp_shift_-2.5_wrap",
                        "noise_combined",
                        "noise_far_reflect",
                        "order0_combined_flips",
                        "order0_noise_combined",
                        "order0_ramp_shift_2.5_constant",
                        "order0_ramp_shift_-2.5_reflect",
                        "order0_far_constant",
                        "order0_far_reflect",
                        "order0_far_wrap",
                        "order0_shift_5_-7_nearest"})
    EXPECT_TRUE(names.count(n)) << "keras_oracle.json lacks the case " << n;
}

// keras-preprocessing's own test (test_affine_transformations.py) and the ramp of issue 18, spelled out:
// constant fill gives cval for every point outside, never a blend with the border.
TEST(ImageDataGeneratorTest, ConstantFillIsCvalOutsideAsKerasOwnTest) {
  TransformParams rot;
  rot.theta = 45;
  const ImageDataGenerator constant(ImageDataGeneratorOptions().fill_mode("constant"));
  const at::Tensor r = constant.apply_transform(at::ones({1, 3, 3}), rot);
  EXPECT_TRUE(at::equal(r, at::tensor({0.f, 0.f, 1.f, 0.f, 1.f, 1.f, 0.f, 0.f, 1.f}).view({1, 3, 3}))) << r;
  TransformParams shift;
  shift.tx = 2.5;
  const at::Tensor ramp = at::arange(8, at::kFloat).mul(10).view({1, 8, 1}).expand({1, 8, 4}).contiguous();
  const at::Tensor s = constant.apply_transform(ramp, shift).select(2, 0).flatten();
  EXPECT_TRUE(at::allclose(s, at::tensor({25.f, 35.f, 45.f, 55.f, 65.f, 0.f, 0.f, 0.f}), 0, 1e-4)) << s;
  // scipy's wrap has period size − 1: row −2.5 is row 4.5 of 8, not 5.5.
  shift.tx = -2.5;
  const at::Tensor w =
      ImageDataGenerator(ImageDataGeneratorOptions().fill_mode("wrap")).apply_transform(ramp, shift).select(2, 0);
  EXPECT_TRUE(at::allclose(w.flatten(), at::tensor({45.f, 55.f, 65.f, 5.f, 15.f, 25.f, 35.f, 45.f}), 0, 1e-4)) << w;
}

// The one-channel (gray files) and generic (4-channel) paths of the resampler agree with Keras too:
// scipy resamples channel by channel, so channel k of the golden output is the answer for channel k.
TEST(ImageDataGeneratorTest, AffineOneAndFourChannelImagesMatchKeras) {
  const nlohmann::json manifest = golden_manifest();
  const at::Tensor gradient = golden_chw("affine_input.npy");
  for (const auto& c : manifest.at("affine").at("cases")) {
    const GoldenAffine g = golden_affine(c);
    if (g.input != "affine_input.npy") continue;
    const at::Tensor keras = golden_chw(g.output);
    for (int64_t k = 0; k < 3; ++k)
      EXPECT_LE(max_abs_diff(apply_golden(g, gradient.slice(0, k, k + 1)), keras.slice(0, k, k + 1)), 1e-3)
          << g.name << " channel " << k;
    const at::Tensor four = at::cat({gradient, gradient.slice(0, 1, 2)});
    const at::Tensor keras_four = at::cat({keras, keras.slice(0, 1, 2)});
    EXPECT_LE(max_abs_diff(apply_golden(g, four), keras_four), 1e-3) << g.name << " 4 channels";
  }
}

// Keras's load_img(..., "rgb", (150, 150), interpolation) of a 28×28 gray PNG, frozen: identical values,
// through load_image + resize_image and through the loader's resize_to_float.
TEST(ImageDataGeneratorTest, LoadAndResizeMatchKerasLoadImg) {
  const nlohmann::json manifest = golden_manifest();
  const nlohmann::json& g = manifest.at("load_img");
  ASSERT_EQ(g.at("target_size"), (std::vector<int>{150, 150}));
  ASSERT_EQ(g.at("color_mode"), "rgb");
  Image img{28, 28, 1, std::vector<uint8_t>(28 * 28)};
  for (size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<uint8_t>((i * 7919) % 251);
  const NpyArray input = read_npy(golden(g.at("input")));
  ASSERT_EQ(input.shape, (std::vector<int64_t>{28, 28}));
  ASSERT_EQ(input.values<uint8_t>(), img.pixels) << "the script's image is ours";
  TempDir d;
  save_png(d.file("g.png"), img);
  const Image loaded = load_image(d.file("g.png"), ColorMode::rgb);
  ASSERT_EQ(g.at("outputs").size(), 2u);
  for (const auto& [interpolation, file] : g.at("outputs").items()) {
    const NpyArray keras = read_npy(golden(file));
    ASSERT_EQ(keras.descr, "|u1");
    ASSERT_EQ(keras.shape, (std::vector<int64_t>{150, 150, 3}));
    const std::vector<uint8_t> expected = keras.values<uint8_t>();
    EXPECT_EQ(resize_image(loaded, 150, 150, interpolation).pixels, expected) << interpolation;
    std::vector<float> f(expected.size());
    resize_to_float(loaded, 150, 150, interpolation, f.data());
    EXPECT_TRUE(std::equal(f.begin(), f.end(), expected.begin())) << interpolation << " (resize_to_float)";
  }
}

// A missing or damaged golden file is an error (the tests above fail), never a skip.
TEST(ImageDataGeneratorTest, MissingOrMalformedGoldenFilesThrow) {
  EXPECT_THROW(read_npy(golden("no_such_file.npy")), std::runtime_error);
  TempDir d;
  std::ofstream(d.file("text.npy")) << "not an array";
  EXPECT_THROW(read_npy(d.file("text.npy")), std::runtime_error);
  std::ifstream f(golden("load_input.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 100u);
  std::ofstream(d.file("short.npy"), std::ios::binary) << bytes.substr(0, bytes.size() - 1);
  EXPECT_THROW(read_npy(d.file("short.npy")), std::runtime_error) << "one byte short of (28, 28) uint8";
  EXPECT_EQ(read_npy(golden("load_input.npy")).numel(), 28 * 28);
}

TEST(ImageDataGeneratorTest, HeightShiftMovesContentVertically) {
  at::Tensor img = at::zeros({1, 20, 20});
  img[0][10].fill_(255);  // a bright row
  TransformParams p;
  p.tx = 2;  // Keras: output(r) = input(r + tx) ⇒ the row moves up by 2
  at::Tensor out = ImageDataGenerator().apply_transform(img, p);
  EXPECT_FLOAT_EQ(out[0][8][5].item<float>(), 255.f);
  EXPECT_FLOAT_EQ(out[0][10][5].item<float>(), 0.f);
  TransformParams q;
  q.ty = 2;  // width shift: a row stays a row
  out = ImageDataGenerator().apply_transform(img, q);
  EXPECT_FLOAT_EQ(out[0][10][5].item<float>(), 255.f);
}

TEST(ImageDataGeneratorTest, ZoomAboveOneShowsContentSmaller) {
  at::Tensor img = at::zeros({1, 40, 40});
  img[0].slice(0, 10, 30).slice(1, 10, 30).fill_(255);  // 20×20 bright square, centred
  TransformParams p;
  p.zx = p.zy = 2;
  const double bright = ImageDataGenerator().apply_transform(img, p).gt(127).sum().item<double>();
  EXPECT_NEAR(bright, 100, 25);  // ≈ 10×10
  p.zx = p.zy = 0.5;
  const double big = ImageDataGenerator().apply_transform(img, p).gt(127).sum().item<double>();
  EXPECT_GT(big, 1500);  // ≈ 40×40 (the square fills the view)
}

TEST(ImageDataGeneratorTest, RandomTransformDrawsWithinKerasRanges) {
  // The article's augmentation (rotation 20°, shear 0.2°, zoom 0.2, horizontal flip) plus shifts and brightness.
  ImageDataGenerator gen(
      article_augmentation().width_shift_range(0.1).height_shift_range(3).brightness_range(0.5, 1.5));
  double theta_min = 1e9, theta_max = -1e9;
  int flips = 0;
  for (int i = 0; i < 2000; ++i) {
    Rng rng(sample_seed(42, 0, i));
    const TransformParams p = gen.get_random_transform(100, 50, rng);
    ASSERT_LE(std::abs(p.theta), 20);
    ASSERT_LE(std::abs(p.shear), 0.2);
    ASSERT_GE(p.zx, 0.8);
    ASSERT_LE(p.zx, 1.2);
    ASSERT_GE(p.zy, 0.8);
    ASSERT_LE(p.zy, 1.2);
    ASSERT_LE(std::abs(p.ty), 5.0);  // 0.1 · width 50
    ASSERT_LE(std::abs(p.tx), 3.0);  // pixels
    ASSERT_FALSE(p.flip_vertical);
    ASSERT_TRUE(p.brightness && *p.brightness >= 0.5 && *p.brightness <= 1.5);
    theta_min = std::min(theta_min, p.theta), theta_max = std::max(theta_max, p.theta);
    flips += p.flip_horizontal;
  }
  EXPECT_LT(theta_min, -19);
  EXPECT_GT(theta_max, 19);
  EXPECT_NEAR(flips, 1000, 100);
  // Same stream ⇒ same draw.
  Rng a(sample_seed(1, 2, 3)), b(sample_seed(1, 2, 3));
  EXPECT_EQ(gen.get_random_transform(10, 10, a).theta, gen.get_random_transform(10, 10, b).theta);
}

TEST(ImageDataGeneratorTest, FlipsChannelShiftAndBrightness) {
  at::Tensor img = at::arange(6, at::kFloat).view({1, 2, 3}).mul(10);  // [[0,10,20],[30,40,50]]
  TransformParams p;
  p.flip_horizontal = true;
  EXPECT_TRUE(at::equal(ImageDataGenerator().apply_transform(img, p), img.flip({2})));
  p.flip_vertical = true;
  EXPECT_TRUE(at::equal(ImageDataGenerator().apply_transform(img, p), img.flip({1, 2})));
  TransformParams s;
  s.channel_shift_intensity = 15;  // clipped to the image's own range 0..50
  EXPECT_TRUE(at::equal(ImageDataGenerator().apply_transform(img, s),
                        at::tensor({15.f, 25.f, 35.f, 45.f, 50.f, 50.f}).view({1, 2, 3})));
  TransformParams b;
  b.brightness = 6;  // multiplied and clipped to 0..255
  EXPECT_TRUE(at::equal(ImageDataGenerator().apply_transform(img, b),
                        at::tensor({0.f, 60.f, 120.f, 180.f, 240.f, 255.f}).view({1, 2, 3})));
}

TEST(ImageDataGeneratorTest, StandardizeRunsPreprocessingBeforeRescale) {
  float seen_max = 0;
  ImageDataGenerator gen(ImageDataGeneratorOptions().rescale(0.5).preprocessing_function([&](const at::Tensor& x) {
    seen_max = x.max().item<float>();
    return x + 2;
  }));
  at::Tensor out = gen.standardize(at::full({1, 2, 2}, 200.f));
  EXPECT_FLOAT_EQ(seen_max, 200.f);
  EXPECT_TRUE(at::equal(out, at::full({1, 2, 2}, 101.f)));
  ImageDataGenerator norm(ImageDataGeneratorOptions().samplewise_std_normalization(true));
  at::Tensor z = norm.standardize(at::tensor({1.f, 3.f}).view({1, 1, 2}));
  EXPECT_TRUE(at::allclose(z.flatten(), at::tensor({-1.f, 1.f}), 1e-4, 1e-4)) << z;
}

TEST(ImageDataGeneratorTest, InvalidOptionsAreConfigErrors) {
  using torchfit::ConfigError;
  EXPECT_THROW(ImageDataGenerator(ImageDataGeneratorOptions().rotation_range(-1)), ConfigError);
  EXPECT_THROW(ImageDataGenerator(ImageDataGeneratorOptions().zoom_range(1.5)), ConfigError);
  EXPECT_THROW(ImageDataGenerator(ImageDataGeneratorOptions().zoom_range(1.2, 0.8)), ConfigError);
  EXPECT_THROW(ImageDataGenerator(ImageDataGeneratorOptions().fill_mode("mirror")), ConfigError);
  EXPECT_THROW(ImageDataGenerator(ImageDataGeneratorOptions().validation_split(1.0)), ConfigError);
  EXPECT_THROW(ImageDataGenerator(ImageDataGeneratorOptions().brightness_range(2, 1)), ConfigError);
  EXPECT_FALSE(ImageDataGenerator(ImageDataGeneratorOptions().rescale(1.0 / 255)).augments());
  EXPECT_TRUE(ImageDataGenerator(ImageDataGeneratorOptions().shear_range(0.2)).augments());
}

TEST(ImageDataGeneratorTest, TransformIntoReplicatesOneChannelAndRejectsOtherChannelCounts) {
  const ImageDataGenerator gen(ImageDataGeneratorOptions().rescale(0.5));
  std::vector<float> hwc = {2, 4, 6, 8}, scratch(12), out(12, -1.f);
  gen.transform_into(hwc.data(), 2, 2, 1, nullptr, out.data(), scratch.data(), 3);
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
  EXPECT_THROW(gen.transform_into(hwc.data(), 2, 2, 1, nullptr, out.data(), scratch.data(), 2), torchfit::ConfigError);
  std::vector<float> rgb(12, 1.f);
  EXPECT_THROW(gen.transform_into(rgb.data(), 2, 2, 3, nullptr, out.data(), scratch.data(), 1), torchfit::ConfigError);
  gen.transform_into(rgb.data(), 2, 2, 3, nullptr, out.data(), scratch.data());  // out_channels 0 = channels
  EXPECT_EQ(out, std::vector<float>(12, 0.5f));
}
