// Tests of framework/src/data/image_resize.cpp: resize_image and resize_to_float give Pillow's values
// (Keras's load_img resizes through Pillow).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <torchfit/data/image.h>
#include <torchfit/error.h>

#include "support/image_files.h"
#include "support/npy.h"

using namespace torchfit::data;
using torchfit::testing::image_of;
using torchfit::testing::NpyArray;
using torchfit::testing::read_npy;

TEST(ImageResize, ResizeNearestIsPixelCentred) {
  // PIL NEAREST (and Keras load_img): source = floor((dst + 0.5) · in / out).
  const Image src = image_of(1, 3, 1, {10, 20, 30});
  const Image up = resize_image(src, 1, 7, "nearest");
  EXPECT_EQ(up.pixels, (std::vector<uint8_t>{10, 10, 20, 20, 20, 30, 30}));
  const Image down = resize_image(image_of(1, 4, 1, {1, 2, 3, 4}), 1, 2, "nearest");
  EXPECT_EQ(down.pixels, (std::vector<uint8_t>{2, 4}));
  try {
    resize_image(src, 2, 2, "cubic");
    FAIL() << "no exception";
  } catch (const torchfit::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("\"cubic\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(resize_image(src, 0, 2, "bilinear"), torchfit::ConfigError);
}

// Values Pillow 9.4 gives (Image.resize of mode L / RGBA), spelled out: bilinear and bicubic up
// (bicubic overshoots, clipped at 255 only), box, antialiased downscaling, RGBA premultiplied by alpha
// (a half-transparent mix keeps the colour instead of darkening towards the transparent pixel's 0).
TEST(ImageResize, ResizeGivesPilValues) {
  const Image row = image_of(1, 3, 1, {0, 100, 200});
  EXPECT_EQ(resize_image(row, 1, 7, "bilinear").pixels, (std::vector<uint8_t>{0, 14, 57, 100, 143, 186, 200}));
  EXPECT_EQ(resize_image(row, 1, 7, "bicubic").pixels, (std::vector<uint8_t>{0, 9, 49, 100, 151, 191, 210}));
  EXPECT_EQ(resize_image(row, 1, 7, "box").pixels, (std::vector<uint8_t>{0, 0, 100, 100, 100, 200, 200}));
  EXPECT_EQ(resize_image(row, 1, 7, "lanczos").pixels, (std::vector<uint8_t>{0, 6, 38, 100, 162, 194, 210}));
  const Image seven = image_of(1, 7, 1, {0, 50, 100, 150, 200, 250, 90});
  EXPECT_EQ(resize_image(seven, 1, 3, "bilinear").pixels, (std::vector<uint8_t>{43, 150, 182}));
  EXPECT_EQ(resize_image(seven, 1, 3, "area").pixels, (std::vector<uint8_t>{25, 150, 170}));
  const Image rgba = image_of(1, 2, 4, {200, 100, 50, 128, 0, 0, 0, 0});
  EXPECT_EQ(resize_image(rgba, 1, 3, "bilinear").pixels,
            (std::vector<uint8_t>{199, 99, 49, 128, 199, 99, 51, 64, 0, 0, 0, 0}));
}

// Pillow's Image.resize, frozen by scripts/keras_oracle.py (tests/data/golden/resize_*.npy): every
// filter, 1, 3 and 4 channels (L, RGB, RGBA), up, down and rows up + columns down, non-integer ratios.
// Identical bytes (tolerance 0); "area" is "box".
TEST(ImageResize, ResizeMatchesPilExactly) {
  const std::string dir = std::string(TORCHFIT_SOURCE_DIR) + "/tests/data/golden/";
  std::ifstream f(dir + "keras_oracle.json");
  ASSERT_TRUE(f) << "missing " << dir << "keras_oracle.json (regenerate: /usr/bin/python3 scripts/keras_oracle.py)";
  const nlohmann::json spec = nlohmann::json::parse(f).at("resize");
  const NpyArray input = read_npy(dir + spec.at("input").get<std::string>());
  ASSERT_EQ(input.shape, (std::vector<int64_t>{23, 37, 4}));
  const std::vector<uint8_t> rgba = input.values<uint8_t>();
  const std::vector<std::string> filters = spec.at("filters");
  ASSERT_EQ(filters, (std::vector<std::string>{"nearest", "bilinear", "bicubic", "box", "hamming", "lanczos"}));
  int compared = 0;
  for (int c : {1, 3, 4}) {
    Image img{23, 37, c, {}};
    for (size_t px = 0; px < 23 * 37; ++px) img.pixels.insert(img.pixels.end(), &rgba[px * 4], &rgba[px * 4 + c]);
    for (const auto& size : spec.at("sizes")) {
      const int h = size.at(0), w = size.at(1);
      const std::string name =
          "resize_" + std::to_string(c) + "ch_" + std::to_string(h) + "x" + std::to_string(w) + ".npy";
      const NpyArray pil = read_npy(dir + name);
      ASSERT_EQ(pil.shape, (std::vector<int64_t>{6, h, w, c})) << name;
      const std::vector<uint8_t> all = pil.values<uint8_t>();
      const size_t n = static_cast<size_t>(h) * w * c;
      for (size_t k = 0; k < filters.size(); ++k) {
        const std::vector<uint8_t> expected(all.begin() + k * n, all.begin() + (k + 1) * n);
        const Image ours = resize_image(img, h, w, filters[k]);
        size_t differ = 0;
        for (size_t i = 0; i < n; ++i) differ += ours.pixels[i] != expected[i];
        EXPECT_EQ(differ, 0u) << name << " " << filters[k] << ": values that differ from PIL's";
        if (filters[k] == "box") EXPECT_EQ(resize_image(img, h, w, "area").pixels, expected) << name;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 54);
}

TEST(ImageResize, ResizeToFloatEqualsResizeImage) {
  for (int c : {1, 3, 4}) {
    Image img{28, 28, c, std::vector<uint8_t>(static_cast<size_t>(28 * 28 * c))};
    for (size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<uint8_t>((i * 131) % 256);
    for (auto [h, w] : {std::pair<int, int>{150, 150}, {5, 3}, {28, 28}, {40, 17}})
      for (const char* interp : {"nearest", "bilinear", "bicubic", "area", "box", "hamming", "lanczos"}) {
        const Image r = resize_image(img, h, w, interp);
        std::vector<float> f(static_cast<size_t>(h * w * c));
        resize_to_float(img, h, w, interp, f.data());
        for (size_t i = 0; i < f.size(); ++i)
          ASSERT_EQ(f[i], static_cast<float>(r.pixels[i]))
              << c << " channels, " << h << "x" << w << " " << interp << " at " << i;
      }
  }
}
