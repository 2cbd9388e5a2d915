#pragma once
/// @file image_data_generator.h
/// ImageDataGenerator — random augmentation and standardisation settings, as
/// keras.preprocessing.image.ImageDataGenerator (keras-preprocessing 1.1). Its flow_from_directory
/// returns a DirectoryIterator (see directory_iterator.h) that applies them per sample.
#include <torch/arg.h>

#include <ATen/ATen.h>
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <torchfit/data/random.h>

namespace torchfit::data {

class DirectoryIterator;
struct FlowOptions;

/// One sample's random transform, as Keras's get_random_transform() dictionary. Angles in degrees,
/// shifts in pixels. tx shifts along the HEIGHT (rows), ty along the WIDTH (columns) — Keras's
/// naming. zx scales rows, zy columns; a zoom > 1 shows the content smaller (output→input mapping).
struct TransformParams {
  double theta = 0;  ///< rotation, degrees
  double tx = 0;     ///< shift along rows (height), pixels
  double ty = 0;     ///< shift along columns (width), pixels
  double shear = 0;  ///< shear angle, degrees
  double zx = 1;     ///< zoom along rows
  double zy = 1;     ///< zoom along columns
  bool flip_horizontal = false;
  bool flip_vertical = false;
  std::optional<double> channel_shift_intensity;  ///< added to every channel, clipped to the image's min..max
  std::optional<double> brightness;               ///< multiplicative brightness factor
  /// True when theta, shifts, shear and zoom are all neutral (no resampling needed).
  bool affine_is_identity() const { return theta == 0 && tx == 0 && ty == 0 && shear == 0 && zx == 1 && zy == 1; }
};

/// Options of ImageDataGenerator. All default to "off", as Keras. Chained setters:
/// `ImageDataGeneratorOptions().rescale(1.0 / 255).shear_range(0.2).zoom_range(0.2).horizontal_flip(true)`.
struct ImageDataGeneratorOptions {
  /// Multiplies every value AFTER augmentation and preprocessing_function (Keras `rescale`);
  /// 0 = none (Keras None). Typical: 1.0/255.
  TORCH_ARG(double, rescale) = 0;
  /// Rotation θ ~ U(−r, +r), in DEGREES.
  TORCH_ARG(double, rotation_range) = 0;
  /// Width (column) shift: r < 1 ⇒ U(−r, r)·width pixels; r ≥ 1 ⇒ U(−r, r) pixels.
  TORCH_ARG(double, width_shift_range) = 0;
  /// Height (row) shift: r < 1 ⇒ U(−r, r)·height pixels; r ≥ 1 ⇒ U(−r, r) pixels. Moves the content
  /// vertically (the documented meaning; Keras ≥ 2.9 swapped the two axes by mistake).
  TORCH_ARG(double, height_shift_range) = 0;
  /// Shear angle ~ U(−s, +s) in DEGREES (so the seeds' 0.2 means ±0.2°, as in Keras).
  TORCH_ARG(double, shear_range) = 0;
  /// Random channel shift ~ U(−r, r) added to all channels (values 0..255), clipped to the image's range.
  TORCH_ARG(double, channel_shift_range) = 0;
  /// Flip columns with probability 0.5.
  TORCH_ARG(bool, horizontal_flip) = false;
  /// Flip rows with probability 0.5.
  TORCH_ARG(bool, vertical_flip) = false;
  /// Sample points outside the input, as keras-preprocessing 1.1 through scipy.ndimage 1.10
  /// (affine_transform order=1, same mode names): "nearest" (the border pixel, default), "constant"
  /// (`cval` for any pixel whose sample point lies outside, no blending), "reflect" (d c b a | a b c d),
  /// "wrap" (scipy's old wrap: period size − 1, the first and last row/column count as one). Only the
  /// affine transform uses it. Errors: ConfigError at construction for any other value.
  TORCH_ARG(std::string, fill_mode) = "nearest";
  /// Fill value for fill_mode "constant", on the 0..255 scale (rescale comes later).
  TORCH_ARG(double, cval) = 0;
  /// How the affine transform samples (Keras 2's ImageDataGenerator interpolation_order, scipy's spline
  /// order): 1 bilinear (default), 0 nearest neighbour — every pixel keeps an input value, so a mask
  /// generator with order 0 keeps its class ids through rotation, shift, shear and zoom (the segmentation
  /// recipe: the same augmentation for the images with order 1 and for the masks with order 0). Errors:
  /// ConfigError at construction for another value (Keras's spline orders 2–5 are not implemented).
  TORCH_ARG(int, interpolation_order) = 1;
  /// Fraction in (0, 1) of each class's files (the first int(v·n) in sorted order) reserved for
  /// subset "validation"; 0 = no split.
  TORCH_ARG(double, validation_split) = 0;
  /// Subtract each sample's mean (over all channels and pixels), after rescale.
  TORCH_ARG(bool, samplewise_center) = false;
  /// Divide each sample by its standard deviation (+1e-6), after centring (implies samplewise_center).
  TORCH_ARG(bool, samplewise_std_normalization) = false;
  /// Called on every sample after augmentation and before rescale (Keras preprocessing_function):
  /// receives a (C, H, W) float32 tensor with values 0..255 and must return a tensor of the same
  /// shape. Runs on worker threads, concurrently: it must be thread-safe.
  TORCH_ARG(std::function<at::Tensor(const at::Tensor&)>, preprocessing_function) = nullptr;

 public:
  /// Zoom range from a float z ⇒ [1 − z, 1 + z] (Keras); default 0 (no zoom).
  ImageDataGeneratorOptions& zoom_range(double z) {
    zoom_range_ = {1.0 - z, 1.0 + z};
    return *this;
  }
  /// Zoom range as an explicit [lo, hi] pair (used as given).
  ImageDataGeneratorOptions& zoom_range(double lo, double hi) {
    zoom_range_ = {lo, hi};
    return *this;
  }
  /// [lo, hi] of the zoom draws (two independent draws, rows and columns).
  const std::array<double, 2>& zoom_range() const { return zoom_range_; }
  /// Brightness factor ~ U(lo, hi); values are multiplied by it and clipped to 0..255.
  ImageDataGeneratorOptions& brightness_range(double lo, double hi) {
    brightness_range_ = std::array<double, 2>{lo, hi};
    return *this;
  }
  const std::optional<std::array<double, 2>>& brightness_range() const { return brightness_range_; }

 private:
  std::array<double, 2> zoom_range_{1.0, 1.0};
  std::optional<std::array<double, 2>> brightness_range_;
};

/// The article's training augmentation: `rescale(1/255)`, `shear_range(0.2)` (degrees), `zoom_range(0.2)`,
/// `rotation_range(20)` (degrees), `horizontal_flip(true)`; everything else off. Its test generator is
/// `ImageDataGeneratorOptions().rescale(1.0 / 255)`.
ImageDataGeneratorOptions article_augmentation();

/// The options that differ from the defaults, in Keras names, e.g. "rescale=0.00392157 rotation_range=20
/// shear_range=0.2 zoom_range=[0.8, 1.2] horizontal_flip=true"; "none" when all are defaults. A
/// preprocessing_function shows as "preprocessing_function=set" (its code cannot be compared).
std::string options_text(const ImageDataGeneratorOptions& options);

/// The standardisation part of `options` — what every sample gets at inference too: {"rescale": F (0 = off,
/// as Keras), "samplewise_center": B, "samplewise_std_normalization": B} (Keras names). A
/// preprocessing_function cannot be saved: it is left out (the caller applies it again).
nlohmann::json preprocessing_config(const ImageDataGeneratorOptions& options);

/// Options with that standardisation and no augmentation, from preprocessing_config's JSON (a checkpoint's
/// CheckpointInfo::preprocessing). Missing keys keep the defaults (rescale off). Errors: ConfigError naming
/// the key for a value of the wrong type or a rescale that is negative or not finite.
ImageDataGeneratorOptions preprocessing_from_config(const nlohmann::json& config);

/// Augmentation + standardisation of single images, as Keras's ImageDataGenerator.
///
/// Per sample (Keras order): decode → colour mode → resize to target_size (BEFORE augmentation) →
/// float 0..255 → random transform (get_random_transform) → apply_transform: ONE bilinear (or, with
/// interpolation_order 0, nearest-neighbour) affine resample for rotation·shift·shear·zoom about the image centre with
/// scipy.ndimage's order-1 rules and fill_mode (as Keras's apply_affine_transform; equal to it within float rounding,
/// borders included), then the flips (exact) → channel shift → brightness → standardize (preprocessing_function,
/// rescale, samplewise centre/std).
///
/// Differences from keras-preprocessing 1.1, on purpose: brightness multiplies the float values and
/// clips to 0..255 (Keras first min-max-stretches the image to 0..255 and rounds to uint8 — a known
/// bug); random draws come from a per-sample counter-based generator (see random.h), not NumPy's
/// global state. Not implemented: featurewise_center/std and zca_whitening (need fit()).
/// Errors: the constructor throws ConfigError for negative ranges, zoom bounds ≤ 0 or lo > hi,
/// brightness lo > hi, validation_split outside [0, 1), an unknown fill_mode or an interpolation_order
/// other than 0 or 1.
class ImageDataGenerator {
 public:
  explicit ImageDataGenerator(ImageDataGeneratorOptions options = {});

  const ImageDataGeneratorOptions& options() const { return options_; }

  /// True when any random augmentation is configured (rotation, shifts, shear, zoom, flips, channel
  /// shift, brightness).
  bool augments() const;

  /// Draws a transform for an image of height × width pixels, in Keras's order: θ, tx (rows), ty
  /// (columns), shear, zx, zy, horizontal flip, vertical flip, channel shift, brightness. Only the
  /// configured draws consume random numbers.
  TransformParams get_random_transform(int height, int width, Rng& rng) const;

  /// Keras's matrix for `p` on a height × width image, as apply_affine_transform hands it to
  /// scipy.ndimage.affine_transform: row-major {m00, m01, offset_row, m10, m11, offset_col} mapping an
  /// OUTPUT pixel (row, col) to the INPUT point (m00·row + m01·col + offset_row, m10·row + m11·col +
  /// offset_col), M = R·T·Sh·Z centred by transform_matrix_offset_center (o = size/2 + 0.5). Flips are
  /// not in it (Keras flips after the resample).
  static std::array<double, 6> keras_affine_matrix(const TransformParams& p, int height, int width);

  /// The same mapping for cv::warpAffine(…, WARP_INVERSE_MAP): OUTPUT (x = column, y = row) to INPUT,
  /// with the flips folded in. Row-major {m00, m01, m02, m10, m11, m12}. (torchfit itself resamples
  /// with scipy's rules, not with OpenCV; this is for callers that want OpenCV's warp.)
  static std::array<double, 6> affine_matrix(const TransformParams& p, int height, int width);

  /// Applies `p` to a float32 (C, H, W) image of values 0..255 and returns a new (C, H, W) tensor
  /// (Keras apply_transform; uses fill_mode and cval).
  at::Tensor apply_transform(const at::Tensor& image, const TransformParams& p) const;

  /// Applies preprocessing_function, rescale and samplewise normalisation to a (C, H, W) float32
  /// image (Keras standardize); returns the result (may be the same tensor, modified in place).
  at::Tensor standardize(at::Tensor image) const;

  /// Core of the per-sample work, used by DirectoryIterator's workers: transforms the (H, W, C)
  /// float32 image `hwc` (values 0..255, contiguous, modified/consumed) with `p` (nullptr ⇒ no
  /// augmentation) and writes the standardised result as (out_channels, H, W) float32 into `out`.
  /// `out_channels` is `channels` or, for a gray source going to an rgb batch, 3 with channels == 1:
  /// the single augmented plane is replicated (every Keras transform treats the three equal channels
  /// alike) before preprocessing_function / samplewise normalisation see the full image.
  /// `scratch` is a reusable buffer of at least H·W·C floats. Errors: ConfigError when out_channels
  /// is neither `channels` nor 3 with channels == 1.
  void transform_into(float* hwc, int height, int width, int channels, const TransformParams* p, float* out,
                      float* scratch, int out_channels = 0) const;

  /// Keras flow_from_directory: a DirectoryIterator over `directory` that applies this generator
  /// (augmentation only for subset "training" or no subset; subset "validation" only standardises).
  /// See FlowOptions for the arguments and DirectoryIterator for the errors.
  std::unique_ptr<DirectoryIterator> flow_from_directory(const std::string& directory, const FlowOptions& flow) const;

 private:
  ImageDataGeneratorOptions options_;
  int fill_mode_ = 0;  // data::FillMode (src/data/affine_resample.h)
};

}  // namespace torchfit::data
