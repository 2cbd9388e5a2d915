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

/// The manifest entry of the affine case `name`; throws when the manifest has none.
const nlohmann::json& golden_case(const nlohmann::json& manifest, const std::string& name) {
  for (const auto& c : manifest.at("affine").at("cases"))
    if (c.at("name") == name) return c;
  throw std::runtime_error("keras_oracle.json has no affine case \"" + name + "\"");
}

/// Mean and max |a − b| over pixels at least `margin` away from the border of (C, H, W) tensors.
std::pair<double, double> abs_diff_inside(const at::Tensor& a, const at::Tensor& b, int margin) {
  const int64_t h = a.size(1), w = a.size(2);
  const at::Tensor d = (a - b).abs().slice(1, margin, h - margin).slice(2, margin, w - margin);
  return {d.mean().item<double>(), d.max().item<double>()};
}

}  // namespace

// Keras's apply_affine_transform (+ flip_axis), frozen: every case's parameters must be the ones the
// golden file was made with, and our single warpAffine must agree with scipy's order-1 resample.
TEST(ImageDataGeneratorTest, AffineMatchesKerasApplyAffineTransform) {
  const nlohmann::json manifest = golden_manifest();
  const at::Tensor input = golden_chw(manifest.at("affine").at("input"));
  ASSERT_EQ(input.sizes(), (at::IntArrayRef{3, 40, 48}));
  ASSERT_LE((input - gradient_image()).abs().max().item<double>(), 1e-4) << "the script's image is ours";
  struct Case {
    const char* name;
    TransformParams p;
    const char* fill;
    double max_mean, max_abs;  // bars on the 0..255 scale, away from a 4-px border
  };
  TransformParams rot;
  rot.theta = 20;
  TransformParams all;
  all.theta = 20, all.tx = 3, all.ty = -4, all.shear = 10, all.zx = 1.2, all.zy = 0.9;
  TransformParams flipped = all;
  flipped.flip_horizontal = true, flipped.flip_vertical = true;
  TransformParams hflip_only;
  hflip_only.flip_horizontal = true;
  const Case cases[] = {{"rotation_20", rot, "nearest", 0.1, 0.5},
                        {"combined", all, "nearest", 0.1, 0.5},
                        {"combined_flips", flipped, "nearest", 0.1, 0.5},
                        {"combined_flips_reflect", flipped, "reflect", 0.1, 0.5},
                        {"horizontal_flip", hflip_only, "nearest", 0.0, 0.0}};
  ASSERT_EQ(manifest.at("affine").at("cases").size(), std::size(cases));
  for (const auto& c : cases) {
    const nlohmann::json& g = golden_case(manifest, c.name);
    // The golden output was made with exactly these parameters.
    EXPECT_EQ(g.at("theta").get<double>(), c.p.theta) << c.name;
    EXPECT_EQ(g.at("tx").get<double>(), c.p.tx) << c.name;
    EXPECT_EQ(g.at("ty").get<double>(), c.p.ty) << c.name;
    EXPECT_EQ(g.at("shear").get<double>(), c.p.shear) << c.name;
    EXPECT_EQ(g.at("zx").get<double>(), c.p.zx) << c.name;
    EXPECT_EQ(g.at("zy").get<double>(), c.p.zy) << c.name;
    EXPECT_EQ(g.at("flip_horizontal").get<bool>(), c.p.flip_horizontal) << c.name;
    EXPECT_EQ(g.at("flip_vertical").get<bool>(), c.p.flip_vertical) << c.name;
    EXPECT_EQ(g.at("fill_mode").get<std::string>(), c.fill) << c.name;
    const at::Tensor keras = golden_chw(g.at("output"));
    ASSERT_EQ(keras.sizes(), input.sizes()) << c.name;
    const at::Tensor ours =
        ImageDataGenerator(ImageDataGeneratorOptions().fill_mode(c.fill)).apply_transform(input, c.p);
    const auto [mean, max] = abs_diff_inside(ours, keras, 4);
    std::printf("[ golden   ] %-24s |ours - keras| mean %.4f, max %.4f (0..255 scale)\n", c.name, mean, max);
    EXPECT_LE(mean, c.max_mean) << c.name;
    EXPECT_LE(max, c.max_abs) << c.name;
  }
}

// Keras's load_img(..., "rgb", (150, 150), "nearest") of a 28×28 gray PNG, frozen: identical values.
TEST(ImageDataGeneratorTest, LoadAndNearestResizeMatchKerasLoadImg) {
  const nlohmann::json manifest = golden_manifest();
  const nlohmann::json& g = manifest.at("load_img");
  ASSERT_EQ(g.at("target_size"), (std::vector<int>{150, 150}));
  ASSERT_EQ(g.at("interpolation"), "nearest");
  ASSERT_EQ(g.at("color_mode"), "rgb");
  Image img{28, 28, 1, std::vector<uint8_t>(28 * 28)};
  for (size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<uint8_t>((i * 7919) % 251);
  const NpyArray input = read_npy(golden(g.at("input")));
  ASSERT_EQ(input.shape, (std::vector<int64_t>{28, 28}));
  ASSERT_EQ(input.values<uint8_t>(), img.pixels) << "the script's image is ours";
  const NpyArray keras = read_npy(golden(g.at("output")));
  ASSERT_EQ(keras.descr, "|u1");
  ASSERT_EQ(keras.shape, (std::vector<int64_t>{150, 150, 3}));

  TempDir d;
  save_png(d.file("g.png"), img);
  const Image ours = resize_image(load_image(d.file("g.png"), ColorMode::rgb), 150, 150, "nearest");
  EXPECT_EQ(ours.pixels, keras.values<uint8_t>()) << "nearest resize must be identical to PIL's";
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
