// Keras fidelity of decoding and iteration, against keras-preprocessing's own results frozen in
// tests/data/golden/ (scripts/keras_oracle.py): JPEG pixels (libjpeg, as Pillow), 16-bit PNGs, batch
// indices, the validation subset's augmentation, dangling links, and logs on stderr.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "support/golden.h"
#include "support/image_tree.h"
#include "support/npy.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using namespace torchfit::data;
using torchfit::testing::golden_file;
using torchfit::testing::make_tree;
using torchfit::testing::read_golden_manifest;
using torchfit::testing::read_npy;
using torchfit::testing::TempDir;

namespace {

// The uint8 golden array `name` (load_img + img_to_array, (H, W, C)) as bytes, with its shape checked
// against `img`.
std::vector<uint8_t> golden_pixels(const std::string& name, const Image& img) {
  const torchfit::testing::NpyArray a = read_npy(golden_file(name));
  EXPECT_EQ(a.descr, "|u1") << name;
  EXPECT_EQ(a.shape, (std::vector<int64_t>{img.height, img.width, img.channels})) << name;
  return a.values<uint8_t>();
}

ColorMode mode_named(const std::string& name) { return parse_color_mode(name); }

// Largest |a − b| over two equally long byte vectors (−1 when the lengths differ).
int max_abs_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return -1;
  int m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(int{a[i]} - int{b[i]}));
  return m;
}

}  // namespace

TEST(KerasFidelity, JpegPixelsEqualPillowForEveryKindOfJpeg) {
  const nlohmann::json manifest = read_golden_manifest();
  int compared = 0;
  for (const auto& c : manifest.at("decode").at("cases")) {
    const std::string input = c.at("input");
    if (input.size() < 4 || input.substr(input.size() - 4) != ".jpg") continue;
    for (const auto& [color_mode, output] : c.at("outputs").items()) {
      const Image img = load_image(golden_file(input), mode_named(color_mode));
      EXPECT_EQ(max_abs_diff(img.pixels, golden_pixels(output, img)), 0) << input << " as " << color_mode;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 7);  // baseline 4:2:0 (rgb, grayscale), 4:4:4, progressive, gray (rgb, grayscale), CMYK
}

TEST(KerasFidelity, SixteenBitPngHighByteByDefaultAndPillowOnRequest) {
  // png16_gray.png: row 0 holds 0..273 (0, 7, 14, …), the other rows the whole 16-bit range.
  const Image gray = load_image(golden_file("png16_gray.png"), ColorMode::grayscale);
  ASSERT_EQ(gray.channels, 1);
  EXPECT_EQ(gray.at(0, 0, 0), 0);
  EXPECT_EQ(gray.at(0, 37, 0), 259 >> 8);  // 259 → 1: the image holding 0..273 is nearly black
  const Image clipped =
      load_image(golden_file("png16_gray.png"), ColorMode::grayscale, false, kMaxImagePixels, SixteenBit::pillow);
  EXPECT_EQ(clipped.at(0, 5, 0), 35);
  EXPECT_EQ(clipped.at(0, 37, 0), 255);  // 259 clipped
  for (const std::string mode : {"rgb", "grayscale"}) {
    const Image img =
        load_image(golden_file("png16_gray.png"), mode_named(mode), false, kMaxImagePixels, SixteenBit::pillow);
    EXPECT_EQ(max_abs_diff(img.pixels, golden_pixels("png16_gray_" + mode + ".npy", img)), 0) << mode;
  }
  // Colour: Pillow reduces to the high byte too, so both policies give Keras's pixels.
  for (const SixteenBit policy : {SixteenBit::high_byte, SixteenBit::pillow}) {
    const Image rgb = load_image(golden_file("png16_rgb.png"), ColorMode::rgb, false, kMaxImagePixels, policy);
    EXPECT_EQ(max_abs_diff(rgb.pixels, golden_pixels("png16_rgb_rgb.npy", rgb)), 0);
  }
  EXPECT_EQ(parse_sixteen_bit("pillow"), SixteenBit::pillow);
  try {
    parse_sixteen_bit("clip");
    ADD_FAILURE() << "no error";
  } catch (const torchfit::ConfigError& e) {
    EXPECT_STREQ(e.what(), "sixteen_bit must be \"high_byte\" or \"pillow\", got \"clip\"");
  }
}

TEST(KerasFidelity, FlowFromDirectoryAppliesTheSixteenBitPolicy) {
  TempDir d;
  fs::create_directories(d.path / "a");
  fs::copy_file(golden_file("png16_gray.png"), d.path / "a" / "g.png");
  auto first_pixel_row = [&](const std::string& policy) {
    DirectoryIterator it(d.str(),
                         FlowOptions().verbose(false).target_size({8, 40}).color_mode("grayscale").sixteen_bit(policy));
    return it.next().x[0][0][0].slice(0, 36, 38);  // values 252 and 259 in the file
  };
  EXPECT_TRUE(at::equal(first_pixel_row("high_byte"), at::tensor({0.f, 1.f})));
  EXPECT_TRUE(at::equal(first_pixel_row("pillow"), at::tensor({252.f, 255.f})));
  EXPECT_THROW(DirectoryIterator(d.str(), FlowOptions().verbose(false).sixteen_bit("scale")), torchfit::ConfigError);
}

TEST(KerasFidelity, TruncatedJpegIsReportedByLibjpeg) {
  TempDir d;
  std::vector<uint8_t> bytes;
  {
    std::ifstream f(golden_file("jpeg_progressive.jpg"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  bytes.resize(bytes.size() / 2);
  torchfit::testing::write_bytes(d.file("cut.jpg"), bytes);
  try {
    load_image(d.file("cut.jpg"));
    ADD_FAILURE() << "a cut JPEG loaded";
  } catch (const torchfit::IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot decode image " + d.file("cut.jpg") +
                                         ": truncated JPEG: the decoder needs more data than the file holds "
                                         "(libjpeg: Premature end of JPEG file)");
  }
}

TEST(KerasFidelity, BatchIndicesAreBoundsChecked) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 7);  // 14 files, batch 1: 14 batches per pass
  DirectoryIterator it(d.str(), FlowOptions().verbose(false).target_size({4, 4}).batch_size(1).seed(3));
  ASSERT_EQ(it.batches_per_pass(), 14);
  EXPECT_EQ(it.make_batch(0, 13).size(), 1);
  try {
    it.make_batch(0, 14);
    ADD_FAILURE() << "no error";
  } catch (const torchfit::IndexError& e) {
    EXPECT_EQ(std::string(e.what()),
              "batch index 14 is out of range: " + d.str() + " gives 14 batches per pass (indices 0..13)");
  }
  EXPECT_THROW(it.make_batch(0, -1), torchfit::IndexError);
  EXPECT_THROW(it.make_batch(-1, 0), torchfit::IndexError);
  EXPECT_THROW(it.batch(14), torchfit::IndexError);
  EXPECT_THROW(it.skip(-1), torchfit::IndexError);
  EXPECT_THROW(pass_order(-1, true, 1, 0), torchfit::IndexError);
  EXPECT_THROW(Image{}.at(0, 0, 0), torchfit::IndexError);
  // it[i] is batch i of the pass next() is in, and does not move next().
  const Batch b3 = it.batch(3);
  EXPECT_EQ(b3.indices, it.make_batch(0, 3).indices);
  EXPECT_EQ(it.next().indices, it.make_batch(0, 0).indices);
  it.skip(13);  // next() is now at the start of pass 1
  EXPECT_EQ(it.batch(3).indices, it.make_batch(1, 3).indices);
  TensorIterator t(at::zeros({3, 1}), at::Tensor(), 2);
  EXPECT_THROW(t.skip(-2), torchfit::IndexError);
}

TEST(KerasFidelity, ValidationSubsetIsAugmentedOnlyWhenAsked) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 16, 8);
  ImageDataGenerator gen(ImageDataGeneratorOptions().horizontal_flip(true).validation_split(0.5));
  const FlowOptions o =
      FlowOptions().verbose(false).target_size({8, 8}).subset("validation").shuffle(false).seed(5).batch_size(16);
  auto plain = gen.flow_from_directory(d.str(), o);
  auto keras = gen.flow_from_directory(d.str(), FlowOptions(o).augment_validation(true));
  EXPECT_FALSE(plain->augmenting());
  EXPECT_TRUE(keras->augmenting());
  const Batch p = plain->next(), k = keras->next();
  int flipped = 0;
  for (int64_t i = 0; i < p.size(); ++i) {
    if (at::equal(k.x[i], p.x[i].flip({2})))
      ++flipped;
    else
      EXPECT_TRUE(at::equal(k.x[i], p.x[i])) << i;  // each sample is the file or its mirror image
  }
  EXPECT_GT(flipped, 0);
  EXPECT_LT(flipped, 16);
  EXPECT_EQ(
      plain->stream_config().at("augmentation").find("(validation subset: no random transforms)") != std::string::npos,
      true);
}

TEST(KerasFidelity, DanglingLinksAndSpecialFilesAreCountedAsUnreadable) {
  TempDir d;
  make_tree(d.path, {"a"}, 2);
  fs::create_symlink(d.path / "gone.png", d.path / "a" / "link.png");
  fs::create_symlink(d.path / "a" / "loop2.png", d.path / "a" / "loop1.png");
  fs::create_symlink(d.path / "a" / "loop1.png", d.path / "a" / "loop2.png");
  ASSERT_EQ(::mkfifo((d.path / "a" / "pipe.png").c_str(), 0600), 0);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  DirectoryIterator it(d.str(), FlowOptions().target_size({4, 4}));
  const std::string out = ::testing::internal::GetCapturedStdout(), err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "Found 2 images belonging to 1 classes. Skipped 4 unreadable files.\n");
  ASSERT_EQ(it.skipped().size(), 4u);
  EXPECT_EQ(it.skipped()[0].path, (d.path / "a" / "link.png").string());
  EXPECT_EQ(it.skipped()[0].reason,
            "dangling symbolic link (its target " + (d.path / "gone.png").string() + " does not exist)");
  EXPECT_EQ(it.skipped()[1].reason, "symbolic link loop (Too many levels of symbolic links)");
  EXPECT_EQ(it.skipped()[3].reason, "not a regular file (a FIFO, socket or device)");
  // Warnings are log lines: on stderr, never mixed into stdout's Found line.
  EXPECT_NE(err.find("[warning] skipping unreadable image " + (d.path / "a" / "link.png").string()), std::string::npos)
      << err;
}

TEST(KerasFidelity, AFifoPutWhereAnImageWasIsReplacedNotWaitedOn) {
  TempDir d;
  make_tree(d.path, {"a"}, 3);
  DirectoryIterator it(d.str(), FlowOptions().verbose(false).target_size({4, 4}).batch_size(3).shuffle(false));
  fs::remove(d.path / "a" / "01.png");  // after the header check: the worker finds it
  ASSERT_EQ(::mkfifo((d.path / "a" / "01.png").c_str(), 0600), 0);
  ::testing::internal::CaptureStderr();
  const Batch b = it.next();  // would block forever in open() without O_NONBLOCK
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(b.size(), 3);
  EXPECT_EQ(it.replaced_samples(), (std::set<int64_t>{1}));
  EXPECT_NE(err.find((d.path / "a" / "01.png").string() + ": not a regular file"), std::string::npos) << err;
}

TEST(KerasFidelity, SkipIsExactAcrossPassesAndRefusesOverflow) {
  // TensorIterator::skip is arithmetic (O(1)); it must land where k calls of next() land.
  const at::Tensor x = at::arange(5, at::kFloat).reshape({5, 1});
  for (int64_t k = 0; k <= 13; ++k) {
    TensorIterator reference(x, at::Tensor(), 2, true, 9), skipped(x, at::Tensor(), 2, true, 9),
        split(x, at::Tensor(), 2, true, 9);
    for (int64_t i = 0; i < k; ++i) reference.next();
    skipped.skip(k);
    split.skip(k / 2);
    split.skip(k - k / 2);
    const Batch want = reference.next();
    EXPECT_EQ(skipped.next().indices, want.indices) << k;
    EXPECT_EQ(split.next().indices, want.indices) << k;
  }
  TensorIterator t(x, at::Tensor(), 2);
  t.next();
  EXPECT_THROW(t.skip(std::numeric_limits<int64_t>::max()), torchfit::IndexError);
  TempDir d;
  make_tree(d.path, {"a"}, 3);
  DirectoryIterator it(d.str(), FlowOptions().verbose(false).target_size({4, 4}).batch_size(2));
  it.next();
  EXPECT_THROW(it.skip(std::numeric_limits<int64_t>::max()), torchfit::IndexError);
  EXPECT_THROW(it.skip(std::numeric_limits<int64_t>::max() / 4), torchfit::IndexError);
  EXPECT_EQ(it.next().size(), 1);                                // still usable: the second batch of the pass
  EXPECT_EQ(it.stream_config().at("sixteen_bit"), "high_byte");  // always recorded, so resume compares it
}

TEST(KerasFidelity, AJpegLibjpegRefusesIsRefusedAsPillowDoesNotDecodedByOpenCv) {
  std::vector<uint8_t> bytes;
  {
    std::ifstream f(golden_file("jpeg_444.jpg"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  bool changed = false;
  for (size_t i = 2; i + 1 < bytes.size() && !changed; ++i)
    if (bytes[i] == 0xFF && bytes[i + 1] == 0xC0) bytes[i + 1] = 0xC3, changed = true;  // SOF0 → SOF3 (lossless)
  ASSERT_TRUE(changed);
  try {
    decode_image(bytes.data(), bytes.size(), ColorMode::rgb, "sof3.jpg");
    ADD_FAILURE() << "decoded";
  } catch (const torchfit::IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot decode image sof3.jpg: corrupt JPEG (libjpeg: Unsupported JPEG process: SOF type 0xc3)");
  }
}
