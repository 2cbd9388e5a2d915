// Image folders paired with mask folders (Keras's zip of two flow_from_directory generators with one seed):
// each mask here is a pixelwise function of its image (1 where the image is brighter than 127), so a right
// pairing with the same flips keeps y == (x > 127) exactly, and any other pairing or transform breaks it.
// Then a small U-Net learns real Fashion-MNIST garment masks from PNG folders.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include <torchfit/data/image_data_generator.h>
#include <torchfit/data/image_masks.h>
#include <torchfit/error.h>
#include <torchfit/keras/model_config_file.h>
#include <torchfit/training/trainer.h>

#include "support/error_message.h"
#include "support/fashion_mnist.h"
#include "support/image_tree.h"
#include "support/temp_dir.h"

namespace torchfit::image_masks_test {
using data::DirectoryIterator;
using data::FlowOptions;
using data::ImageDataGenerator;
using data::ImageDataGeneratorOptions;
using data::ImageMaskIterator;
using data::ImageMaskOptions;

namespace {

// `n` gray size×size images with random pixels under root/images/all/NNN.png and their masks under
// root/masks/all/NNN.png: 255 (binary) or 1 (ids) where the image is > 127, else 0.
void write_pairs(const std::filesystem::path& root, int n, int size, bool ids) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pixel(0, 255);
  for (int k = 0; k < n; ++k) {
    data::Image img{size, size, 1, std::vector<uint8_t>(static_cast<size_t>(size * size))};
    data::Image mask = img;
    for (size_t i = 0; i < img.pixels.size(); ++i) {
      img.pixels[i] = static_cast<uint8_t>(pixel(rng));
      mask.pixels[i] = img.pixels[i] > 127 ? (ids ? 1 : 255) : 0;
    }
    char name[32];
    std::snprintf(name, sizeof name, "%03d.png", k);
    torchfit::testing::write_png(root / "images" / "all" / name, img);
    torchfit::testing::write_png(root / "masks" / "all" / name, mask);
  }
}

FlowOptions flow(int size, uint64_t seed) {
  return FlowOptions()
      .target_size({size, size})
      .color_mode("grayscale")
      .class_mode("none")
      .batch_size(5)
      .seed(seed)
      .workers(2)
      .verbose(false);
}

std::unique_ptr<ImageMaskIterator> pairs(const std::filesystem::path& root, const ImageDataGeneratorOptions& image_gen,
                                         const ImageDataGeneratorOptions& mask_gen, const ImageMaskOptions& o,
                                         uint64_t mask_seed = 3) {
  return std::make_unique<ImageMaskIterator>(
      ImageDataGenerator(image_gen).flow_from_directory((root / "images").string(), flow(12, 3)),
      ImageDataGenerator(mask_gen).flow_from_directory((root / "masks").string(), flow(12, mask_seed)), o);
}

std::string config_error(const std::function<void()>& f) {
  return torchfit::testing::error_message<ConfigError>(f, "ConfigError");
}

}  // namespace

TEST(ImageMasks, EachImageGetsItsOwnMaskFlippedAlikeAsClassIds) {
  torchfit::testing::TempDir dir("masks");
  write_pairs(dir.path, 13, 12, false);
  const auto flips = ImageDataGeneratorOptions().horizontal_flip(true).vertical_flip(true);
  auto it = pairs(dir.path, ImageDataGeneratorOptions(flips).rescale(1.0 / 255), flips,
                  ImageMaskOptions().encoding("binary"));
  EXPECT_EQ(it->samples(), 13);
  int64_t flipped = 0, seen = 0;
  for (int b = 0; b < 6; ++b) {  // two passes (3 batches each): reshuffled, new flips
    const data::Batch batch = it->next();
    ASSERT_EQ(batch.y.scalar_type(), at::kLong);
    ASSERT_EQ(batch.y.sizes().vec(), (std::vector<int64_t>{batch.size(), 12, 12}));
    const at::Tensor want = (batch.x.select(1, 0) * 255).round().gt(127).to(at::kLong);
    EXPECT_TRUE(at::equal(batch.y, want)) << "batch " << b << ": a mask is not its image's";
    // The same files unflipped: how many samples were flipped (so the flips were drawn and applied alike).
    for (size_t i = 0; i < batch.indices.size(); ++i, ++seen) {
      const data::Image raw =
          data::load_image(it->images().filepaths().at(batch.indices[i]), data::ColorMode::grayscale);
      const at::Tensor plain =
          at::from_blob(const_cast<uint8_t*>(raw.pixels.data()), {12, 12}, at::kByte).to(at::kFloat) / 255;
      flipped += at::allclose(batch.x[static_cast<int64_t>(i)][0], plain) ? 0 : 1;
    }
  }
  EXPECT_GT(flipped, 0) << "no sample was flipped: the test would not see a mismatch of the transforms";
  EXPECT_LT(flipped, seen);
  // "ids" masks: the pixel value is the class.
  torchfit::testing::TempDir ids_dir("mask_ids");
  write_pairs(ids_dir.path, 6, 12, true);
  auto ids = pairs(ids_dir.path, ImageDataGeneratorOptions(), ImageDataGeneratorOptions(), ImageMaskOptions());
  const data::Batch b = ids->next();
  EXPECT_TRUE(at::equal(b.y, b.x.select(1, 0).gt(127).to(at::kLong)));
}

TEST(ImageMasks, SourcesThatDoNotPairAreErrorsNamingWhat) {
  torchfit::testing::TempDir dir("mask_errors");
  write_pairs(dir.path, 6, 12, false);
  const ImageDataGeneratorOptions none;
  EXPECT_NE(config_error([&] { pairs(dir.path, none, none, {}, 4); }).find("the same seed (images 3, masks 4)"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              pairs(dir.path, none, ImageDataGeneratorOptions().horizontal_flip(true), {});
            }).find("the same random augmentation"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              pairs(dir.path, none, ImageDataGeneratorOptions().rescale(1.0 / 255), {});
            }).find("must not rescale"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              pairs(dir.path, none, none, ImageMaskOptions().encoding("rgb"));
            }).find("encoding must be \"ids\" or \"binary\""),
            std::string::npos);
  std::filesystem::rename(dir.path / "masks" / "all" / "002.png", dir.path / "masks" / "all" / "002b.png");
  EXPECT_NE(config_error([&] { pairs(dir.path, none, none, {}); }).find("but the mask '"), std::string::npos);
  std::filesystem::remove(dir.path / "masks" / "all" / "002b.png");
  EXPECT_NE(config_error([&] { pairs(dir.path, none, none, {}); }).find("the same number of files (images 6, masks 5)"),
            std::string::npos);
  // A rotation resamples bilinearly: the masks' pixels blend, and the batch says so instead of training on it.
  torchfit::testing::TempDir r("mask_rotation");
  write_pairs(r.path, 6, 12, false);
  const auto rotate = ImageDataGeneratorOptions().rotation_range(40);
  EXPECT_NE(config_error([&] { pairs(r.path, rotate, rotate, {}); }).find("give it interpolation_order 0"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              pairs(r.path, rotate, rotate, ImageMaskOptions().encoding("binary"));
            }).find("give it interpolation_order 0"),
            std::string::npos)
      << "binary masks would be thresholded after blending";
  // A mask source resized bilinearly blends class ids into whole numbers that are other classes.
  EXPECT_NE(config_error([&] {
              ImageMaskIterator(ImageDataGenerator().flow_from_directory((r.path / "images").string(), flow(12, 3)),
                                ImageDataGenerator().flow_from_directory((r.path / "masks").string(),
                                                                         flow(12, 3).interpolation("bilinear")));
            }).find("must resize with interpolation \"nearest\""),
            std::string::npos);
  // A brightness change is caught at the batch: the mask pixels are no longer whole numbers.
  const auto bright = ImageDataGeneratorOptions().brightness_range(0.5, 0.9);
  auto brightened = pairs(r.path, bright, bright, {});
  EXPECT_NE(config_error([&] { brightened->next(); }).find("has pixels between class ids"), std::string::npos);
  // The masks may fill with a class of their own (cval), e.g. an ignore class.
  EXPECT_NO_THROW(pairs(r.path, ImageDataGeneratorOptions(rotate).fill_mode("constant"),
                        ImageDataGeneratorOptions(rotate).fill_mode("constant").cval(255).interpolation_order(0), {}));
}

// Keras 2's recipe for augmented segmentation: the mask generator draws the same rotation, shift, shear, zoom
// and flips with interpolation_order 0, so every mask pixel is a class id of the mask. With the images also at
// order 0 each output pixel of image and mask comes from the same input pixel, so y == (x > 127) holds
// exactly — any other transform, draw or pairing breaks it. With the images bilinear (order 1, as Keras users
// train), the pairing is accepted and the masks still hold only class ids.
TEST(ImageMasks, NearestNeighbourMasksFollowTheImagesThroughEveryAffineTransform) {
  torchfit::testing::TempDir dir("mask_affine");
  write_pairs(dir.path, 13, 12, true);
  const auto augment = ImageDataGeneratorOptions()
                           .rotation_range(40)
                           .width_shift_range(0.2)
                           .height_shift_range(0.2)
                           .shear_range(20)
                           .zoom_range(0.3)
                           .horizontal_flip(true)
                           .fill_mode("reflect");
  const auto masks = ImageDataGeneratorOptions(augment).interpolation_order(0);
  auto exact = pairs(dir.path, masks, masks, ImageMaskOptions());
  int64_t moved = 0;
  for (int b = 0; b < 3; ++b) {
    const data::Batch batch = exact->next();
    EXPECT_TRUE(at::equal(batch.y, batch.x.select(1, 0).gt(127).to(at::kLong))) << "batch " << b;
    for (size_t i = 0; i < batch.indices.size(); ++i) {
      const data::Image raw =
          data::load_image(exact->images().filepaths().at(batch.indices[i]), data::ColorMode::grayscale);
      const at::Tensor plain = at::from_blob(const_cast<uint8_t*>(raw.pixels.data()), {12, 12}, at::kByte);
      moved += at::equal(batch.x[static_cast<int64_t>(i)][0].to(at::kByte), plain) ? 0 : 1;
    }
  }
  EXPECT_GE(moved, 12) << "the transforms left the images as they were: the test would see no mismatch";
  auto bilinear = pairs(dir.path, ImageDataGeneratorOptions(augment).rescale(1.0 / 255), masks, ImageMaskOptions());
  const data::Batch b = bilinear->next();
  EXPECT_TRUE(b.y.ge(0).logical_and(b.y.le(1)).all().item<bool>());
  const double agree = b.y.eq(b.x.select(1, 0).gt(0.5).to(at::kLong)).to(at::kFloat).mean().item<double>();
  EXPECT_GT(agree, 0.6) << "the masks do not follow their images";
  EXPECT_NE(config_error([&] {
              ImageDataGenerator(ImageDataGeneratorOptions().interpolation_order(3));
            }).find("interpolation_order must be 0 (nearest) or 1 (bilinear), got 3"),
            std::string::npos);
}

// Real data: 600 Fashion-MNIST training images and their garment masks as PNG folders (the silhouette:
// pixels > 25 of 255; enclosed holes are not filled here), the shipped U-Net trained from the folders, with
// flips and with rotation, shifts and zoom (order-0 masks).
TEST(ImageMasks, TheShippedUNetLearnsFashionMnistMasksFromFolders) {
  if (!torchfit::testing::fashion_mnist_installed()) GTEST_SKIP() << "Debian's dataset-fashion-mnist is not installed";
  torchfit::testing::TempDir dir("mask_fashion");
  const auto [x, labels] = torchfit::testing::fashion_mnist("train");
  for (int64_t k = 0; k < 600; ++k) {
    const at::Tensor img = (x[k].reshape({28, 28}) * 255).round().to(at::kByte).contiguous();
    data::Image image{28, 28, 1, std::vector<uint8_t>(img.data_ptr<uint8_t>(), img.data_ptr<uint8_t>() + 784)};
    data::Image mask = image;
    for (auto& p : mask.pixels) p = p > 25 ? 1 : 0;
    char name[32];
    std::snprintf(name, sizeof name, "%04ld.png", static_cast<long>(k));
    torchfit::testing::write_png(dir.path / "images" / "all" / name, image);
    torchfit::testing::write_png(dir.path / "masks" / "all" / name, mask);
  }
  // Flips only, then Keras 2's recipe for geometric augmentation: rotation, shifts and zoom drawn alike for
  // both, bilinear for the images and interpolation_order 0 for the masks.
  const auto flips = ImageDataGeneratorOptions().horizontal_flip(true);
  const auto geometric =
      ImageDataGeneratorOptions(flips).rotation_range(15).width_shift_range(0.1).height_shift_range(0.1).zoom_range(
          0.1);
  for (const auto& augment : {flips, geometric}) {
    auto f = flow(28, 5).batch_size(32);
    ImageMaskIterator train(ImageDataGenerator(ImageDataGeneratorOptions(augment).rescale(1.0 / 255))
                                .flow_from_directory((dir.path / "images").string(), f),
                            ImageDataGenerator(ImageDataGeneratorOptions(augment).interpolation_order(0))
                                .flow_from_directory((dir.path / "masks").string(), f));
    at::manual_seed(3);
    const std::string config = std::string(TORCHFIT_SOURCE_DIR) + "/apps/train_cnn/fashion_unet.json";
    Trainer t(keras::model_config_for_data(config, AdaptToDataOptions().architecture_only(true)),
              CompileOptions()
                  .loss("sparse_categorical_crossentropy")
                  .metrics({R"({"class_name": "MeanIoU", "config": {"num_classes": 2, "sparse_y_pred": false}})"}));
    const History h = t.fit(train, FitOptions().epochs(2).verbose(0));
    const double iou = h.history.at("mean_io_u").back();
    const std::string what = augment.rotation_range() > 0 ? "geometric" : "flips";
    RecordProperty("mean_io_u_" + what, std::to_string(iou));
    std::printf("[ measured ] %s augmentation: mean_io_u %.4f after 2 epochs\n", what.c_str(), iou);
    EXPECT_GT(iou, 0.85) << what << ": the U-Net did not learn the masks (every pixel background gives about 0.27)";
  }
}

}  // namespace torchfit::image_masks_test
