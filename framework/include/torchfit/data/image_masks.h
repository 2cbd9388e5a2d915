#pragma once
/// @file image_masks.h
/// Segmentation from image folders: each image paired with the mask image of the same name, as Keras's
/// ImageDataGenerator documents it — two generators with the same seed and augmentation,
/// `flow_from_directory(images, class_mode=None, seed=s)` and `flow_from_directory(masks,
/// class_mode=None, color_mode="grayscale", seed=s)`, zipped — with the pairing checked, and the mask's
/// pixels turned into class ids (sparse targets for sparse_categorical_crossentropy and MeanIoU).
#include <cstdint>
#include <memory>
#include <string>

#include <torch/arg.h>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/data/directory_iterator.h>

namespace torchfit::data {

/// How a mask pixel (0..255, grayscale) becomes a class id.
struct ImageMaskOptions {
  /// "ids" (default): the pixel value is the class id (masks saved with values 0, 1, 2, …); "binary":
  /// pixels above 127 are class 1, the others 0 (masks saved as 0/255).
  TORCH_ARG(std::string, encoding) = "ids";
  /// Subtracted from every id ("ids" only): 1 for masks whose classes start at 1 (the Oxford-IIIT Pet
  /// trimaps 1, 2, 3, which Keras's U-Net example shifts to 0, 1, 2). Default 0.
  TORCH_ARG(int64_t, offset) = 0;
};

/// Batches of (images, masks): x is the image source's batch (N, C, H, W); y the mask source's batch as
/// class ids, int64 (N, H, W). Both sources walk their folders in the same order (file names sorted
/// within each class folder, the same shuffle for the same seed) and draw the same random transform for
/// the same position (the draws are keyed by seed, pass and position), so image i and mask i are the
/// same file name, flipped alike. The masks must stay class ids through the pipeline: nearest resizing
/// (flow_from_directory's default interpolation) and flips keep them exact; a rotation, shift, shear or
/// zoom (bilinear resampling), brightness or channel shift would blend them, and a batch whose mask
/// pixels are no longer whole numbers is an error rather than a silently wrong target.
///
/// Errors (constructor, ConfigError naming both folders' files or settings): another number of samples
/// or batch size, another seed or shuffle, another target size, different random augmentation
/// (interpolation_order aside), a mask
/// source that is not grayscale or that rescales, an image and a mask of different names (stems) at the
/// same position, an unknown encoding or a negative offset. next(): ConfigError for mask pixels that are
/// not whole numbers or give a negative id (naming the first file). The sources' own errors propagate.
class ImageMaskIterator : public BatchIterator {
 public:
  ImageMaskIterator(std::unique_ptr<DirectoryIterator> images, std::unique_ptr<DirectoryIterator> masks,
                    ImageMaskOptions options = {});

  Batch next() override;
  int64_t samples() const override { return images_->samples(); }
  int64_t batch_size() const override { return images_->batch_size(); }
  void reset() override;
  void skip(int64_t batches) override;
  /// The image source's settings, and the mask source's prefixed "mask_" (both decide the batches).
  StreamConfig stream_config() const override;
  /// The image source's preprocessing (what a model needs at inference).
  nlohmann::json preprocessing() const override { return images_->preprocessing(); }
  /// The image files.
  std::vector<std::string> filenames() const override { return images_->filenames(); }
  void shard(int64_t rank, int64_t world_size) override;

  const DirectoryIterator& images() const { return *images_; }
  const DirectoryIterator& masks() const { return *masks_; }

 private:
  at::Tensor class_ids(const at::Tensor& mask, const std::vector<int64_t>& indices) const;

  std::unique_ptr<DirectoryIterator> images_, masks_;
  ImageMaskOptions options_;
};

}  // namespace torchfit::data
