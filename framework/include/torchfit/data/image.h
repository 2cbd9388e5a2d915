#pragma once
/// @file image.h
/// Image files: header checks, decoding with Keras/PIL colour conversion, resizing, PNG encoding.
/// Pixels are 8-bit, stored row-major with channels last (H, W, C) — the order of the files and of
/// Keras's load_img/img_to_array; tensors built from them are (C, H, W) (see image_to_tensor).
#include <ATen/ATen.h>
#include <cstdint>
#include <string>
#include <vector>

namespace torchfit::data {

/// How many channels a sample gets, as Keras's color_mode: "rgb" (3), "grayscale" (1), "rgba" (4).
enum class ColorMode { rgb, grayscale, rgba };

/// Parses "rgb" | "grayscale" | "rgba". Errors: ConfigError naming the value.
ColorMode parse_color_mode(const std::string& name);
/// 3 for rgb, 1 for grayscale, 4 for rgba.
int channels_of(ColorMode mode);

/// A decoded 8-bit image: `pixels` holds height·width·channels bytes in (H, W, C) order.
struct Image {
  int height = 0;
  int width = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;
  /// Byte at row y, column x, channel c.
  uint8_t at(int y, int x, int c) const { return pixels[(static_cast<size_t>(y) * width + x) * channels + c]; }
};

/// Cheap validity check of an image file without decoding it: the file is non-empty, its magic bytes
/// say PNG, JPEG, BMP, GIF or PNM (PPM/PGM), the header parses (size > 0) and the file is not cut
/// short (PNG ends with its IEND chunk, JPEG has its end-of-image marker near the end, BMP is as long
/// as its header says). Returns "" when the file looks fine, otherwise the reason ("empty file",
/// "not an image (unrecognised header)", "truncated PNG (no IEND chunk)", "TIFF is not supported by
/// the decoder (stb_image)", …). Never throws for bad content; a file that cannot be opened returns
/// "cannot open: <errno text>".
std::string check_image_file(const std::string& path);

/// Decodes an image file (stb_image) and converts it to `mode` the way PIL's Image.convert does
/// (hence Keras's load_img):
///  - rgb: grayscale is replicated; an alpha channel (RGBA, LA, palette with transparency) is DROPPED,
///    not composited on a background (PIL convert("RGB") semantics);
///  - grayscale: colour → L = (19595·R + 38470·G + 7471·B + 32768) >> 16 (ITU-R 601-2, PIL's fixed
///    point); alpha dropped;
///  - rgba: images without alpha get alpha 255.
/// 16-bit PNGs are reduced to 8 bits. Errors: IoError naming the file and stb's reason.
/// @param keep_gray with mode rgb, a file that holds gray (L or LA) is returned with ONE channel
///        (alpha dropped) instead of three equal ones; the caller replicates it after its per-pixel
///        work, which is the same for all three channels. Default false (always `channels_of(mode)`).
Image load_image(const std::string& path, ColorMode mode = ColorMode::rgb, bool keep_gray = false);

/// Decodes an in-memory encoded image (same conversions and `keep_gray` as load_image). `what` names
/// the source in error messages. Errors: IoError.
Image decode_image(const uint8_t* data, size_t size, ColorMode mode, const std::string& what = "<memory>",
                   bool keep_gray = false);

/// Resizes to (height, width) pixels with Keras's interpolation names: "nearest" (default in Keras;
/// bit-identical to PIL's NEAREST, source pixel = floor((k + 0.5)·in/out) as PIL accumulates it), "bilinear",
/// "bicubic", "area". Upscaling with bilinear matches PIL; downscaling with bilinear/bicubic does not antialias the way
/// PIL does (use "area" to downscale). Returns the input unchanged when the size already matches.
/// Errors: ConfigError for an unknown interpolation or a size < 1.
Image resize_image(const Image& image, int height, int width, const std::string& interpolation = "nearest");

/// resize_image followed by a conversion to float: writes height·width·channels float32 values
/// (H, W, C order, 0..255) to `out`. The "nearest" path reads the source directly (no 8-bit
/// intermediate); the others resize in 8 bits first, like PIL. Errors: as resize_image.
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
