// ImageMaskIterator: Keras's zip(image_generator, mask_generator) for segmentation, with the pairing
// checked and the masks' pixels read as class ids.
#include <torchfit/data/image_masks.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <sstream>

#include <ATen/ATen.h>

#include <torchfit/error.h>

namespace torchfit::data {
namespace {

// The random augmentation of a source's "augmentation" text (options_text): its tokens without the
// standardisation (rescale, samplewise centring, preprocessing_function), which only the images have,
// and without interpolation_order and cval (0 for the masks, 1 for the images; a mask's fill class of its
// own: the same draws either way).
std::string random_part(const std::string& text) {
  std::istringstream in(text == "none" ? "" : text);
  std::string token, out;
  while (in >> token) {
    if (token.rfind("rescale=", 0) == 0 || token.rfind("samplewise_", 0) == 0 ||
        token.rfind("preprocessing_function=", 0) == 0 || token.rfind("interpolation_order=", 0) == 0 ||
        token.rfind("cval=", 0) == 0)
      continue;
    out += (out.empty() ? "" : " ") + token;
  }
  return out.empty() ? "none" : out;
}

// The geometric options of options_text: what the affine resample of the masks does.
constexpr const char* kGeometric[] = {
    "rotation_range=", "width_shift_range=", "height_shift_range=", "shear_range=", "zoom_range="};

std::string stem(const std::string& file) { return std::filesystem::path(file).stem().string(); }

void check_same(const StreamConfig& a, const StreamConfig& b, const std::string& key, const std::string& what) {
  const std::string x = a.count(key) ? a.at(key) : "", y = b.count(key) ? b.at(key) : "";
  if (x != y) {
    throw ConfigError("image masks: the image and mask sources must have the same " + what + " (images " + x +
                      ", masks " + y + "); Keras pairs them by position");
  }
}

void check_sources(const DirectoryIterator& images, const DirectoryIterator& masks) {
  const StreamConfig a = images.stream_config(), b = masks.stream_config();
  check_same(a, b, "samples", "number of files");
  check_same(a, b, "batch_size", "batch_size");
  check_same(a, b, "seed", "seed");
  check_same(a, b, "shuffle", "shuffle");
  check_same(a, b, "target_size", "target_size");
  if (random_part(a.at("augmentation")) != random_part(b.at("augmentation"))) {
    throw ConfigError(
        "image masks: the mask generator must draw the same random augmentation as the image one "
        "(images: " +
        a.at("augmentation") + "; masks: " + b.at("augmentation") + ")");
  }
  if (masks.options().interpolation() != "nearest") {
    throw ConfigError("image masks: the mask source must resize with interpolation \"nearest\" (got \"" +
                      masks.options().interpolation() + "\"): other filters blend neighbouring class ids");
  }
  const std::string mask_augmentation = b.at("augmentation");
  const bool geometric = std::any_of(std::begin(kGeometric), std::end(kGeometric),
                                     [&](const char* k) { return mask_augmentation.find(k) != std::string::npos; });
  if (geometric && mask_augmentation.find("interpolation_order=0") == std::string::npos) {
    throw ConfigError("image masks: the mask generator resamples its rotation, shift, shear or zoom bilinearly (" +
                      mask_augmentation + "): give it interpolation_order 0, as Keras's segmentation recipe does");
  }
  if (masks.options().color_mode() != "grayscale") {
    throw ConfigError("image masks: the mask source must read grayscale (color_mode \"grayscale\"), got \"" +
                      masks.options().color_mode() + "\"");
  }
  const nlohmann::json p = masks.preprocessing();
  if (p.is_object() && (p.value("rescale", 0.0) != 0.0 || p.value("samplewise_center", false) ||
                        p.value("samplewise_std_normalization", false))) {
    throw ConfigError("image masks: the mask generator must not rescale or normalise (it has " + p.dump() +
                      "): its pixels are the class ids");
  }
  const auto& fa = images.filenames();
  const auto& fb = masks.filenames();
  for (size_t i = 0; i < fa.size(); ++i) {
    if (stem(fa[i]) != stem(fb[i])) {
      throw ConfigError("image masks: file " + std::to_string(i) + " is the image '" + fa[i] + "' but the mask '" +
                        fb[i] + "'; each image needs a mask of the same name (the extension may differ)");
    }
  }
}

}  // namespace

ImageMaskIterator::ImageMaskIterator(std::unique_ptr<DirectoryIterator> images,
                                     std::unique_ptr<DirectoryIterator> masks, ImageMaskOptions options)
    : images_(std::move(images)), masks_(std::move(masks)), options_(std::move(options)) {
  if (!images_ || !masks_) throw ConfigError("image masks: both an image and a mask source are needed");
  if (options_.encoding() != "ids" && options_.encoding() != "binary") {
    throw ConfigError("image masks: encoding must be \"ids\" or \"binary\", got \"" + options_.encoding() + "\"");
  }
  if (options_.offset() < 0)
    throw ConfigError("image masks: offset must be >= 0, got " + std::to_string(options_.offset()));
  check_sources(*images_, *masks_);
}

at::Tensor ImageMaskIterator::class_ids(const at::Tensor& mask, const std::vector<int64_t>& indices) const {
  const at::Tensor v = mask.select(1, 0);  // (N, H, W), 0..255
  const auto first_bad = [&](const at::Tensor& bad) {
    const int64_t n = bad.reshape({bad.size(0), -1}).any(1).to(at::kLong).argmax().item<int64_t>();
    return masks_->filenames().at(static_cast<size_t>(indices.at(static_cast<size_t>(n))));
  };
  if (options_.encoding() == "binary") return v.gt(127.0).to(at::kLong);
  const at::Tensor blended = (v - v.round()).abs().gt(1e-3);
  if (blended.any().item<bool>()) {
    throw ConfigError("image masks: the mask '" + first_bad(blended) +
                      "' has pixels between class ids after augmentation: brightness, a channel shift or a "
                      "fractional cval change the values (give the mask generator none of them)");
  }
  const at::Tensor ids = v.round().to(at::kLong) - options_.offset();
  if (ids.lt(0).any().item<bool>()) {
    throw ConfigError("image masks: the mask '" + first_bad(ids.lt(0)) + "' has a pixel below offset " +
                      std::to_string(options_.offset()) + " (a negative class id)");
  }
  return ids;
}

Batch ImageMaskIterator::next() {
  Batch b = images_->next();
  Batch m = masks_->next();
  if (b.indices != m.indices) {
    throw ConfigError(
        "image masks: the image and mask sources gave different files for one batch (were they "
        "advanced separately?)");
  }
  b.y = class_ids(m.x, m.indices);
  b.wait_ms += m.wait_ms;
  return b;
}

void ImageMaskIterator::reset() {
  images_->reset();
  masks_->reset();
}

void ImageMaskIterator::skip(int64_t batches) {
  images_->skip(batches);
  masks_->skip(batches);
}

StreamConfig ImageMaskIterator::stream_config() const {
  StreamConfig c = images_->stream_config();
  for (const auto& [key, value] : masks_->stream_config()) c["mask_" + key] = value;
  c["mask_encoding"] = options_.encoding() + (options_.offset() ? " offset " + std::to_string(options_.offset()) : "");
  return c;
}

void ImageMaskIterator::shard(int64_t rank, int64_t world_size) {
  BatchIterator::shard(rank, world_size);
  images_->shard(rank, world_size);
  masks_->shard(rank, world_size);
}

}  // namespace torchfit::data
