#pragma once
/// @file image.h
/// Image files: header checks, decoding (stb_image, OpenCV imgcodecs) with Keras/PIL colour conversion,
/// the pixel limit, resizing, PNG encoding.
/// Pixels are 8-bit, stored row-major with channels last (H, W, C) — the order of the files and of
/// Keras's load_img/img_to_array; tensors built from them are (C, H, W) (see image_to_tensor).
#include <ATen/ATen.h>
#include <cstdint>
#include <string>
#include <vector>

#include <torchfit/error.h>

namespace torchfit::data {

/// How many channels a sample gets, as Keras's color_mode: "rgb" (3), "grayscale" (1), "rgba" (4).
enum class ColorMode { rgb, grayscale, rgba };

/// Parses "rgb" | "grayscale" | "rgba". Errors: ConfigError naming the value.
ColorMode parse_color_mode(const std::string& name);
/// 3 for rgb, 1 for grayscale, 4 for rgba.
int channels_of(ColorMode mode);

/// How 16-bit samples (16-bit PNG, TIFF, ...) become 8-bit. Keras's load_img goes through Pillow, which is
/// not consistent: a 16-bit GRAYSCALE file (Pillow mode I / I;16) is clipped to 0..255 — a file using the
/// 16-bit range is nearly all white, one holding 0..255 keeps its values — while 16-bit colour and
/// gray+alpha files are reduced to their high byte (value >> 8).
///  - high_byte (torchfit's default): every 16-bit sample becomes value >> 8 — the whole 0..65535 range
///    scaled to 0..255, as Pillow does for colour files and as image viewers show them;
///  - pillow: exactly Pillow's (hence Keras's) result: gray clipped, colour and gray+alpha by high byte.
enum class SixteenBit { high_byte, pillow };
/// Parses "high_byte" | "pillow". Errors: ConfigError naming the value.
SixteenBit parse_sixteen_bit(const std::string& name);
/// A decoded 8-bit image: `pixels` holds height·width·channels bytes in (H, W, C) order.
struct Image {
  int height = 0;
  int width = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;
  /// Byte at row y, column x, channel c. Errors: IndexError naming the position and the size.
  uint8_t at(int y, int x, int c) const {
    if (y < 0 || y >= height || x < 0 || x >= width || c < 0 || c >= channels)
      throw IndexError("Image::at(" + std::to_string(y) + ", " + std::to_string(x) + ", " + std::to_string(c) +
                       ") is outside the " + std::to_string(height) + "x" + std::to_string(width) + "x" +
                       std::to_string(channels) + " image");
    return pixels[(static_cast<size_t>(y) * width + x) * channels + c];
  }
};

/// Pillow's Image.MAX_IMAGE_PIXELS, 1024·1024·1024 / 4 / 3 = 89,478,485 pixels: torchfit's default
/// `max_image_pixels`. As Pillow: an image with more pixels (width·height) is decoded with a warning
/// (DecompressionBombWarning), one with more than twice as many is refused (DecompressionBombError).
constexpr int64_t kMaxImagePixels = 89'478'485;

/// The pixel limit (Pillow's decompression-bomb check): "" when width·height <= 2·max_image_pixels
/// or max_image_pixels <= 0 (no limit, as Pillow's MAX_IMAGE_PIXELS = None), otherwise the reason
/// "image too large: W x H = N pixels, limit 2·max_image_pixels (twice max_image_pixels M, as
/// Pillow's DecompressionBombError)". Sizes in pixels.
std::string pixel_limit_reason(int64_t width, int64_t height, int64_t max_image_pixels);

/// Validity check of an image file without decoding its pixels where the header allows it: the file
/// is non-empty; a format stb_image reads (PNG, JPEG, BMP, GIF, binary PGM/PPM) has a header that
/// stb_image parses with a size > 0 and within the pixel limit (pixel_limit_reason; above
/// max_image_pixels a warning naming the file is logged, as Pillow's DecompressionBombWarning); any
/// other file (WebP, TIFF, RLE BMP, JPEG 2000, ... or an unknown signature) is decoded once through
/// OpenCV's imgcodecs (which has no header-only call) and its decoded size checked against the limit.
/// Truncation and corrupt pixel data of stb formats are found when decoding (load_image), not here.
/// Returns "" when the file is fine, otherwise the reason: "empty file", "not an image (unrecognised
/// header)", "unsupported format HEIF/HEIC (neither stb_image nor OpenCV decodes it)", "corrupt BMP
/// header (size 0x4)", "image too large: …", "cannot decode WebP: OpenCV failed (…)", …
/// Never throws for bad content; a file that cannot be opened returns "cannot open: <errno text>".
/// @param max_image_pixels Pillow's MAX_IMAGE_PIXELS (default kMaxImagePixels); <= 0 disables the limit.
std::string check_image_file(const std::string& path, int64_t max_image_pixels = kMaxImagePixels);

/// Decodes an image file and converts it to `mode` the way PIL's Image.convert does (hence Keras's
/// load_img):
///  - rgb: grayscale is replicated; an alpha channel (RGBA, LA, palette with transparency) is DROPPED,
///    not composited on a background (PIL convert("RGB") semantics);
///  - grayscale: colour → L = (19595·R + 38470·G + 7471·B + 32768) >> 16 (ITU-R 601-2, PIL's fixed
///    point); alpha dropped;
///  - rgba: images without alpha get alpha 255.
/// Decoders: libjpeg(-turbo) for JPEG (the library Pillow decodes JPEG with, with Pillow's settings:
/// accurate integer IDCT, fancy upsampling; CMYK/YCCK converted to RGB as Pillow does), so JPEG pixels
/// equal Keras's; stb_image for PNG, BMP, GIF and binary PGM/PPM; OpenCV's imgcodecs (cv::imdecode,
/// no EXIF rotation, as PIL's open) for what stb_image cannot read — WebP, TIFF, JPEG 2000, Sun
/// raster, PFM, Radiance HDR, ASCII PNM/PAM, BMP variants such as RLE, arithmetic-coded JPEG — whatever
/// the file's extension says. 16-bit samples as `sixteen_bit` says (default: their high byte), float
/// samples (0..1) to 0..255. A file is refused only when no decoder can decode it; truncation is the decoder's finding
/// (it needs bytes past the end of the file), so trailing data after a complete image (e.g. a phone's
/// motion-photo video after the JPEG) is ignored, as Pillow does.
/// Errors: IoError "cannot decode image <path>: <reason>" with the reasons of check_image_file plus
/// "truncated JPEG: the decoder needs more data than the file holds (libjpeg: Premature end of JPEG
/// file)", "truncated PNG: … (stb_image: …)", "corrupt PNG
/// (stb_image: …; OpenCV cannot decode it either)" and the pixel limit (checked from the header before
/// decoding for stb formats; after OpenCV decodes the others, OpenCV itself refusing 2^30 pixels).
/// @param keep_gray with mode rgb, a file that holds gray (L or LA) is returned with ONE channel
///        (alpha dropped) instead of three equal ones; the caller replicates it after its per-pixel
///        work, which is the same for all three channels. Default false (always `channels_of(mode)`).
/// @param max_image_pixels Pillow's MAX_IMAGE_PIXELS (default kMaxImagePixels; refused above twice
///        it; <= 0: no limit). Decoding does not warn; check_image_file does.
/// @param sixteen_bit how 16-bit samples become 8-bit (see SixteenBit; default high_byte).
Image load_image(const std::string& path, ColorMode mode = ColorMode::rgb, bool keep_gray = false,
                 int64_t max_image_pixels = kMaxImagePixels, SixteenBit sixteen_bit = SixteenBit::high_byte);

/// Decodes an in-memory encoded image (same decoders, conversions, `keep_gray`, pixel limit and
/// `sixteen_bit` as load_image). `what` names the source in error messages. Errors: IoError.
Image decode_image(const uint8_t* data, size_t size, ColorMode mode, const std::string& what = "<memory>",
                   bool keep_gray = false, int64_t max_image_pixels = kMaxImagePixels,
                   SixteenBit sixteen_bit = SixteenBit::high_byte);

/// Resizes to (height, width) pixels exactly as Keras's load_img does, i.e. Pillow's (9.4)
/// Image.resize((width, height), filter) of the image in mode L (1 channel), RGB (3) or RGBA (4), with
/// Keras's interpolation names: "nearest" (Keras's default; PIL NEAREST: source pixel
/// floor((k + 0.5)·in/out) as PIL accumulates it), "bilinear", "bicubic" (a = −0.5), "box", "hamming",
/// "lanczos" (a = 3), and "area" = "box" (the average of the covered input area; torchfit's older
/// name). The filters other than nearest are PIL's separable convolution: support scaled by in/out
/// when downscaling (antialiased), 22-bit fixed-point weights, an 8-bit intermediate between the
/// horizontal and the vertical pass, and for 4 channels the colour premultiplied by alpha during the
/// resample (PIL's RGBA → RGBa → RGBA). Bit-identical to PIL (tests against frozen PIL output, all
/// filters, 1/3/4 channels, up and down). Returns a copy of the input when the size already matches.
/// Errors: ConfigError for an unknown interpolation (naming it) or a size < 1.
Image resize_image(const Image& image, int height, int width, const std::string& interpolation = "nearest");

/// resize_image followed by a conversion to float: writes height·width·channels float32 values
/// (H, W, C order, 0..255) to `out`, which must hold that many. The "nearest" path reads the source
/// directly (no 8-bit intermediate); the others resize in 8 bits first, like PIL. Errors: as
/// resize_image.
void resize_to_float(const Image& image, int height, int width, const std::string& interpolation, float* out);

/// Float tensor (C, H, W), values 0..255 as float32, owning its memory.
at::Tensor image_to_tensor(const Image& image);

/// PNG bytes of an image with 1, 2, 3 or 4 channels (stb_image_write, compression level 8).
/// Errors: IoError when encoding fails.
std::vector<uint8_t> encode_png(const Image& image);

/// Baseline JPEG bytes of a 1- or 3-channel image (stb_image_write), quality 1..100 (default 95).
/// Errors: IoError when encoding fails.
std::vector<uint8_t> encode_jpeg(const Image& image, int quality = 95);

/// Writes encode_png(image) to `path` atomically (replacing it). Errors: IoError naming the path and the OS
/// reason (e.g. no space left); no partial file is left.
void save_png(const std::string& path, const Image& image);

}  // namespace torchfit::data
