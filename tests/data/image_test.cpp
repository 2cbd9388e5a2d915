// Tests of torchfit/data/image.h and idx.h: decoding, PIL-compatible conversions, header checks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <torchfit/data/idx.h>
#include <torchfit/data/image.h>
#include <torchfit/error.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "support/npy.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using namespace torchfit::data;
using torchfit::testing::NpyArray;
using torchfit::testing::read_npy;
using torchfit::testing::TempDir;

namespace {

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

Image make(int h, int w, int c, std::vector<uint8_t> px) { return Image{h, w, c, std::move(px)}; }

uint32_t crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return c ^ 0xFFFFFFFFu;
}

void chunk(std::vector<uint8_t>& png, const char* type, const std::vector<uint8_t>& data) {
  const uint32_t n = static_cast<uint32_t>(data.size());
  for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<uint8_t>(n >> s));
  std::vector<uint8_t> td(type, type + 4);
  td.insert(td.end(), data.begin(), data.end());
  png.insert(png.end(), td.begin(), td.end());
  const uint32_t c = crc32(td.data(), td.size());
  for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<uint8_t>(c >> s));
}

/// A palette PNG (colour type 3) with a tRNS chunk, 2×1 pixels: index 0 = opaque blue,
/// index 1 = fully transparent red. Built by hand (stored deflate block) since stb cannot write it.
std::vector<uint8_t> palette_png_with_transparency() {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  chunk(png, "IHDR", {0, 0, 0, 2, 0, 0, 0, 1, 8, 3, 0, 0, 0});
  chunk(png, "PLTE", {0, 0, 255, 255, 0, 0});
  chunk(png, "tRNS", {255, 0});
  const std::vector<uint8_t> raw = {0 /*filter*/, 0, 1};
  std::vector<uint8_t> z = {0x78, 0x01, 0x01, 3, 0, 0xFC, 0xFF};
  z.insert(z.end(), raw.begin(), raw.end());
  uint32_t a = 1, b = 0;
  for (uint8_t v : raw) a = (a + v) % 65521, b = (b + a) % 65521;
  const uint32_t adler = (b << 16) | a;
  for (int s = 24; s >= 0; s -= 8) z.push_back(static_cast<uint8_t>(adler >> s));
  chunk(png, "IDAT", z);
  chunk(png, "IEND", {});
  return png;
}

}  // namespace

TEST(ImageTest, PngRoundTripKeepsPixels) {
  TempDir d;
  const Image img = make(2, 3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
  save_png(d.file("a.png"), img);
  const Image back = load_image(d.file("a.png"), ColorMode::rgb);
  EXPECT_EQ(back.height, 2);
  EXPECT_EQ(back.width, 3);
  EXPECT_EQ(back.channels, 3);
  EXPECT_EQ(back.pixels, img.pixels);
  EXPECT_EQ(check_image_file(d.file("a.png")), "");
}

TEST(ImageTest, GrayscaleReplicatedToRgbAndColourToGrayUsesPilWeights) {
  TempDir d;
  save_png(d.file("g.png"), make(1, 2, 1, {10, 200}));
  const Image rgb = load_image(d.file("g.png"), ColorMode::rgb);
  ASSERT_EQ(rgb.channels, 3);
  EXPECT_EQ(rgb.pixels, (std::vector<uint8_t>{10, 10, 10, 200, 200, 200}));
  // PIL: L = (19595 R + 38470 G + 7471 B + 32768) >> 16 → (255,0,0) → 76, (0,255,0) → 150, (0,0,255) → 29.
  save_png(d.file("c.png"), make(1, 3, 3, {255, 0, 0, 0, 255, 0, 0, 0, 255}));
  const Image gray = load_image(d.file("c.png"), ColorMode::grayscale);
  ASSERT_EQ(gray.channels, 1);
  EXPECT_EQ(gray.pixels, (std::vector<uint8_t>{76, 150, 29}));
}

TEST(ImageTest, RgbaAlphaIsDroppedForRgbAndKeptForRgba) {
  TempDir d;
  save_png(d.file("a.png"), make(1, 2, 4, {255, 0, 0, 0, 0, 255, 0, 128}));
  EXPECT_EQ(load_image(d.file("a.png"), ColorMode::rgb).pixels, (std::vector<uint8_t>{255, 0, 0, 0, 255, 0}));
  EXPECT_EQ(load_image(d.file("a.png"), ColorMode::rgba).pixels, (std::vector<uint8_t>{255, 0, 0, 0, 0, 255, 0, 128}));
  save_png(d.file("g.png"), make(1, 1, 1, {7}));
  EXPECT_EQ(load_image(d.file("g.png"), ColorMode::rgba).pixels, (std::vector<uint8_t>{7, 7, 7, 255}));
}

TEST(ImageTest, PaletteWithTransparencyDecodesToPaletteColours) {
  TempDir d;
  write_bytes(d.file("p.png"), palette_png_with_transparency());
  EXPECT_EQ(check_image_file(d.file("p.png")), "");
  EXPECT_EQ(load_image(d.file("p.png"), ColorMode::rgb).pixels, (std::vector<uint8_t>{0, 0, 255, 255, 0, 0}));
  EXPECT_EQ(load_image(d.file("p.png"), ColorMode::rgba).pixels, (std::vector<uint8_t>{0, 0, 255, 255, 255, 0, 0, 0}));
}

TEST(ImageTest, KeepGrayReturnsOneChannelOnlyForGrayFilesInRgbMode) {
  TempDir d;
  save_png(d.file("g.png"), make(1, 2, 1, {10, 200}));
  save_png(d.file("la.png"), make(1, 2, 2, {10, 0, 200, 255}));
  save_png(d.file("c.png"), make(1, 1, 3, {1, 2, 3}));
  const Image g = load_image(d.file("g.png"), ColorMode::rgb, /*keep_gray=*/true);
  EXPECT_EQ(g.channels, 1);
  EXPECT_EQ(g.pixels, (std::vector<uint8_t>{10, 200}));
  const Image la = load_image(d.file("la.png"), ColorMode::rgb, true);
  EXPECT_EQ(la.channels, 1) << "gray + alpha: alpha dropped, as PIL's LA -> RGB";
  EXPECT_EQ(la.pixels, (std::vector<uint8_t>{10, 200}));
  EXPECT_EQ(load_image(d.file("c.png"), ColorMode::rgb, true).channels, 3) << "colour files stay colour";
  EXPECT_EQ(load_image(d.file("g.png"), ColorMode::rgba, true).channels, 4) << "keep_gray only applies to rgb";
  EXPECT_EQ(load_image(d.file("g.png"), ColorMode::rgb, false).channels, 3);
  write_bytes(d.file("p.png"), palette_png_with_transparency());
  EXPECT_EQ(load_image(d.file("p.png"), ColorMode::rgb, true).channels, 3) << "palette files are colour";
}

TEST(ImageTest, HeaderCheckNamesTheProblem) {
  TempDir d;
  write_bytes(d.file("empty.png"), {});
  EXPECT_EQ(check_image_file(d.file("empty.png")), "empty file");
  std::ofstream(d.file("text.jpg")) << "this is not a picture\n";
  EXPECT_EQ(check_image_file(d.file("text.jpg")), "not an image (unrecognised header)");
  std::vector<uint8_t> png = encode_png(make(8, 8, 3, std::vector<uint8_t>(192, 100)));
  write_bytes(d.file("cut.png"), std::vector<uint8_t>(png.begin(), png.begin() + static_cast<long>(png.size() / 2)));
  // The header is intact: truncation is the decoder's finding (tests/data/image_decoders_test.cpp). Debian
  // 12's stb_image (2.28) reads only IHDR for the header check; Debian 13's (2.30) reads on and finds it.
  const std::string cut = check_image_file(d.file("cut.png"));
  EXPECT_TRUE(cut.empty() || cut.rfind("truncated PNG: the decoder needs more data", 0) == 0) << cut;
  EXPECT_THROW(load_image(d.file("cut.png")), torchfit::IoError);
  std::vector<uint8_t> jpg = encode_jpeg(make(16, 16, 3, std::vector<uint8_t>(768, 90)));
  EXPECT_GT(jpg.size(), 100u);
  write_bytes(d.file("ok.jpg"), jpg);
  EXPECT_EQ(check_image_file(d.file("ok.jpg")), "");
  write_bytes(d.file("t.tif"), {'I', 'I', '*', 0, 8, 0, 0, 0});
  EXPECT_EQ(check_image_file(d.file("t.tif")),
            "cannot decode TIFF: OpenCV failed (the file is corrupt, or a TIFF variant OpenCV does not support)");
  EXPECT_NE(check_image_file(d.file("missing.png")).find("cannot open"), std::string::npos);
  EXPECT_THROW(load_image(d.file("text.jpg")), torchfit::IoError);
  try {
    load_image(d.file("empty.png"));
    FAIL() << "no exception";
  } catch (const torchfit::IoError& e) {
    EXPECT_NE(std::string(e.what()).find("empty.png"), std::string::npos) << e.what();
  }
}

TEST(ImageTest, ResizeNearestIsPixelCentred) {
  // PIL NEAREST (and Keras load_img): source = floor((dst + 0.5) · in / out).
  const Image src = make(1, 3, 1, {10, 20, 30});
  const Image up = resize_image(src, 1, 7, "nearest");
  EXPECT_EQ(up.pixels, (std::vector<uint8_t>{10, 10, 20, 20, 20, 30, 30}));
  const Image down = resize_image(make(1, 4, 1, {1, 2, 3, 4}), 1, 2, "nearest");
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
TEST(ImageTest, ResizeGivesPilValues) {
  const Image row = make(1, 3, 1, {0, 100, 200});
  EXPECT_EQ(resize_image(row, 1, 7, "bilinear").pixels, (std::vector<uint8_t>{0, 14, 57, 100, 143, 186, 200}));
  EXPECT_EQ(resize_image(row, 1, 7, "bicubic").pixels, (std::vector<uint8_t>{0, 9, 49, 100, 151, 191, 210}));
  EXPECT_EQ(resize_image(row, 1, 7, "box").pixels, (std::vector<uint8_t>{0, 0, 100, 100, 100, 200, 200}));
  EXPECT_EQ(resize_image(row, 1, 7, "lanczos").pixels, (std::vector<uint8_t>{0, 6, 38, 100, 162, 194, 210}));
  const Image seven = make(1, 7, 1, {0, 50, 100, 150, 200, 250, 90});
  EXPECT_EQ(resize_image(seven, 1, 3, "bilinear").pixels, (std::vector<uint8_t>{43, 150, 182}));
  EXPECT_EQ(resize_image(seven, 1, 3, "area").pixels, (std::vector<uint8_t>{25, 150, 170}));
  const Image rgba = make(1, 2, 4, {200, 100, 50, 128, 0, 0, 0, 0});
  EXPECT_EQ(resize_image(rgba, 1, 3, "bilinear").pixels,
            (std::vector<uint8_t>{199, 99, 49, 128, 199, 99, 51, 64, 0, 0, 0, 0}));
}

// Pillow's Image.resize, frozen by scripts/keras_oracle.py (tests/data/golden/resize_*.npy): every
// filter, 1, 3 and 4 channels (L, RGB, RGBA), up, down and rows up + columns down, non-integer ratios.
// Identical bytes (tolerance 0); "area" is "box".
TEST(ImageTest, ResizeMatchesPilExactly) {
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

TEST(ImageTest, ImageToTensorIsChwFloat) {
  const at::Tensor t = image_to_tensor(make(1, 2, 3, {1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(t.sizes(), (at::IntArrayRef{3, 1, 2}));
  EXPECT_FLOAT_EQ(t[0][0][1].item<float>(), 4.f);
  EXPECT_FLOAT_EQ(t[2][0][0].item<float>(), 3.f);
}

TEST(ImageTest, IdxReaderReadsPlainAndGzip) {
  TempDir d;
  std::vector<uint8_t> idx = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 5, 6, 7, 8};
  write_bytes(d.file("a.idx"), idx);
  IdxArray a = read_idx_file(d.file("a.idx"));
  EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(a.data, (std::vector<uint8_t>{5, 6, 7, 8}));
  const std::string cmd = "gzip -c " + d.file("a.idx") + " > " + d.file("a.idx.gz");
  if (std::system(cmd.c_str()) == 0) {
    IdxArray b = read_idx_file(d.file("a.idx.gz"));
    EXPECT_EQ(b.dims, a.dims);
    EXPECT_EQ(b.data, a.data);
  }
  write_bytes(d.file("short.idx"), {0, 0, 8, 1, 0, 0, 0, 9, 1});
  EXPECT_THROW(read_idx_file(d.file("short.idx")), torchfit::IoError);
}

TEST(ImageTest, FashionMnistFromDebianIsReadable) {
  const std::string path = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " missing (apt install dataset-fashion-mnist)";
  const IdxArray labels = read_idx_file(path);
  ASSERT_EQ(labels.dims, (std::vector<int64_t>{10000}));
  EXPECT_EQ(labels.data[0], 9);  // first test image: ankle boot
  EXPECT_EQ(labels.data[1], 2);  // pullover
}

TEST(ImageTest, ResizeToFloatEqualsResizeImage) {
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
