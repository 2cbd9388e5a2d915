// Tests of ImageDataGenerator: random draws, the affine resample against Keras's own
// apply_affine_transform (Debian python3-keras-preprocessing), and standardisation order.
#include <gtest/gtest.h>

#include <torchfit/data/image.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "support/temp_dir.h"

namespace fs = std::filesystem;
using namespace torchfit::data;
using torchfit::testing::TempDir;

namespace {

/// A smooth (C=3, H=40, W=48) test image with different gradients per channel, values 0..255.
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

const char* kOracle = R"PY(
import sys
import numpy as np
try:
    from keras_preprocessing.image.affine_transformations import apply_affine_transform, flip_axis
except Exception as e:  # not installed: the C++ test skips
    print("keras_preprocessing unavailable:", e)
    sys.exit(77)
mode = sys.argv[1]
if mode == "affine":
    inp, out, h, w, c = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    theta, tx, ty, shear, zx, zy = map(float, sys.argv[7:13])
    fh, fv, fill = sys.argv[13] == "1", sys.argv[14] == "1", sys.argv[15]
    x = np.fromfile(inp, dtype=np.float32).reshape(h, w, c)
    y = apply_affine_transform(x, theta, tx, ty, shear, zx, zy, row_axis=0, col_axis=1, channel_axis=2,
                               fill_mode=fill, cval=0.0, order=1)
    if fh:
        y = flip_axis(y, 1)
    if fv:
        y = flip_axis(y, 0)
    np.asarray(y, dtype=np.float32).tofile(out)
elif mode == "load":
    from keras_preprocessing.image import load_img, img_to_array
    path, out, th, tw, interp = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    a = img_to_array(load_img(path, color_mode="rgb", target_size=(th, tw), interpolation=interp))
    np.asarray(a, dtype=np.float32).tofile(out)
)PY";

/// Runs the oracle; returns false (and sets *why) when Python or keras_preprocessing is missing.
bool run_oracle(const TempDir& d, const std::string& args, std::string* why) {
  if (!fs::exists("/usr/bin/python3")) {
    *why = "/usr/bin/python3 not found";
    return false;
  }
  std::ofstream(d.file("oracle.py")) << kOracle;
  const std::string cmd = "/usr/bin/python3 " + d.file("oracle.py") + " " + args + " > " + d.file("oracle.log") + " 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::ifstream log(d.file("oracle.log"));
    *why = "oracle failed (rc " + std::to_string(rc) + "): " + std::string(std::istreambuf_iterator<char>(log), {});
    return false;
  }
  return true;
}

std::vector<float> read_floats(const std::string& path, size_t n) {
  std::vector<float> v(n);
  std::ifstream f(path, std::ios::binary);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(float)));
  return v;
}

/// Mean |ours − Keras| over pixels at least `margin` away from the border, 0..255 scale.
double compare_with_keras(const TransformParams& p, const std::string& fill, int margin, std::string* why) {
  TempDir d;
  const at::Tensor img = gradient_image();
  const int c = 3, h = 40, w = 48;
  const at::Tensor hwc = img.permute({1, 2, 0}).contiguous();
  {
    std::ofstream f(d.file("in.raw"), std::ios::binary);
    f.write(reinterpret_cast<const char*>(hwc.data_ptr<float>()), static_cast<std::streamsize>(hwc.numel() * 4));
  }
  char args[512];
  std::snprintf(args, sizeof args, "affine %s %s %d %d %d %.17g %.17g %.17g %.17g %.17g %.17g %d %d %s",
                d.file("in.raw").c_str(), d.file("out.raw").c_str(), h, w, c, p.theta, p.tx, p.ty, p.shear, p.zx, p.zy,
                p.flip_horizontal ? 1 : 0, p.flip_vertical ? 1 : 0, fill.c_str());
  if (!run_oracle(d, args, why)) return -1;
  const std::vector<float> keras = read_floats(d.file("out.raw"), static_cast<size_t>(h * w * c));
  const at::Tensor ours = ImageDataGenerator(ImageDataGeneratorOptions().fill_mode(fill)).apply_transform(img, p);
  auto o = ours.accessor<float, 3>();
  double sum = 0;
  int64_t count = 0;
  for (int y = margin; y < h - margin; ++y)
    for (int x = margin; x < w - margin; ++x)
      for (int ch = 0; ch < c; ++ch) {
        sum += std::abs(o[ch][y][x] - keras[static_cast<size_t>((y * w + x) * c + ch)]);
        ++count;
      }
  return sum / static_cast<double>(count);
}

}  // namespace

TEST(ImageDataGeneratorTest, AffineMatchesKerasApplyAffineTransform) {
  struct Case {
    const char* name;
    TransformParams p;
    const char* fill;
  };
  TransformParams rot;
  rot.theta = 20;
  TransformParams all;
  all.theta = 20, all.tx = 3, all.ty = -4, all.shear = 10, all.zx = 1.2, all.zy = 0.9;
  TransformParams flipped = all;
  flipped.flip_horizontal = true, flipped.flip_vertical = true;
  TransformParams hflip_only;
  hflip_only.flip_horizontal = true;
  const Case cases[] = {{"rotation 20", rot, "nearest"},
                        {"rot 20, shifts (3, -4), shear 10, zoom (1.2, 0.9)", all, "nearest"},
                        {"same + both flips", flipped, "nearest"},
                        {"same + both flips, reflect", flipped, "reflect"},
                        {"horizontal flip only", hflip_only, "nearest"}};
  for (const auto& c : cases) {
    std::string why;
    const double mad = compare_with_keras(c.p, c.fill, 4, &why);
    if (mad < 0) GTEST_SKIP() << "Keras oracle not available: " << why;
    std::printf("[ oracle   ] %-50s mean |ours - keras| = %.4f (0..255 scale)\n", c.name, mad);
    EXPECT_LE(mad, 1.0) << c.name;
  }
}

TEST(ImageDataGeneratorTest, LoadAndNearestResizeMatchKerasLoadImg) {
  TempDir d;
  Image img{28, 28, 1, std::vector<uint8_t>(28 * 28)};
  for (size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<uint8_t>((i * 7919) % 251);
  save_png(d.file("g.png"), img);
  std::string why;
  if (!run_oracle(d, "load " + d.file("g.png") + " " + d.file("out.raw") + " 150 150 nearest", &why))
    GTEST_SKIP() << "Keras oracle not available: " << why;
  const std::vector<float> keras = read_floats(d.file("out.raw"), 150 * 150 * 3);
  const Image ours = resize_image(load_image(d.file("g.png"), ColorMode::rgb), 150, 150, "nearest");
  ASSERT_EQ(ours.pixels.size(), keras.size());
  size_t diff = 0;
  for (size_t i = 0; i < keras.size(); ++i) diff += static_cast<float>(ours.pixels[i]) != keras[i];
  EXPECT_EQ(diff, 0u) << "nearest resize must be identical to PIL's";
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
  ImageDataGenerator gen(article_augmentation().width_shift_range(0.1).height_shift_range(3).brightness_range(0.5, 1.5));
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
