// JPEG through libjpeg(-turbo) with Pillow's settings. libjpeg reports errors by longjmp: the functions
// holding a setjmp keep no C++ objects whose destructors a longjmp would skip.
#include "data/jpeg_decoder.h"

#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE and size_t declared first

#include <jerror.h>
#include <jpeglib.h>

namespace torchfit::data::jpeg {

namespace {

struct ErrorManager {
  jpeg_error_mgr pub;  // first member: libjpeg hands back a pointer to it
  std::jmp_buf jump;
  bool truncated = false;
  char message[JMSG_LENGTH_MAX] = "";
};

ErrorManager* manager_of(j_common_ptr cinfo) { return reinterpret_cast<ErrorManager*>(cinfo->err); }

[[noreturn]] void on_error(j_common_ptr cinfo) {
  ErrorManager* err = manager_of(cinfo);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Warnings (level -1) and trace messages: never printed. A warning that the data ended early is how
// libjpeg reports a cut file (it then pads with an end marker and goes on, as Pillow would not).
void on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) manager_of(cinfo)->truncated = true;
}

// Header: sets the output colour space (gray, BGR, or CMYK converted below) and the output size.
// Returns false after a libjpeg error.
bool read_header(jpeg_decompress_struct* cinfo, ErrorManager* err, const uint8_t* data, size_t size) {
  if (setjmp(err->jump)) return false;
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(cinfo, TRUE);
  const J_COLOR_SPACE in = cinfo->jpeg_color_space;
  cinfo->out_color_space = in == JCS_GRAYSCALE                  ? JCS_GRAYSCALE
                           : (in == JCS_CMYK || in == JCS_YCCK) ? JCS_CMYK
                                                                : JCS_EXT_BGR;
  cinfo->dct_method = JDCT_ISLOW;  // Pillow's (and libjpeg's) default outside draft mode
  cinfo->do_fancy_upsampling = TRUE;
  jpeg_calc_output_dimensions(cinfo);
  return true;
}

// Decodes every scanline into `pixels` (output_height rows of output_width·output_components bytes).
bool read_pixels(jpeg_decompress_struct* cinfo, ErrorManager* err, uint8_t* pixels) {
  if (setjmp(err->jump)) return false;
  jpeg_start_decompress(cinfo);
  const size_t stride = static_cast<size_t>(cinfo->output_width) * cinfo->output_components;
  while (cinfo->output_scanline < cinfo->output_height) {
    JSAMPROW row = pixels + cinfo->output_scanline * stride;
    jpeg_read_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_decompress(cinfo);
  return true;
}

// PIL's MULDIV255: a·b / 255 rounded, in integers.
inline int muldiv255(int a, int b) {
  const int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

// CMYK samples as libjpeg returns them (Adobe's inverted convention, which Pillow assumes: raw mode
// "CMYK;I") → BGR as Pillow's convert("RGB") (cmyk2rgb: R = (255 − K) − (255 − K)·C / 255, ...).
std::vector<uint8_t> cmyk_to_bgr(const std::vector<uint8_t>& cmyk, size_t npx) {
  std::vector<uint8_t> bgr(npx * 3);
  for (size_t i = 0; i < npx; ++i) {
    const uint8_t* p = &cmyk[i * 4];
    const int nk = p[3];  // 255 − K with K = 255 − raw
    for (int c = 0; c < 3; ++c) bgr[i * 3 + (2 - c)] = static_cast<uint8_t>(nk - muldiv255(255 - p[c], nk));
  }
  return bgr;
}

}  // namespace

Decoded decode(const uint8_t* data, size_t size, int64_t max_pixels) {
  Decoded out;
  jpeg_decompress_struct cinfo{};
  ErrorManager err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = on_error;
  err.pub.emit_message = on_message;
  bool ok = read_header(&cinfo, &err, data, size);
  if (ok) {
    out.width = static_cast<int>(cinfo.output_width);
    out.height = static_cast<int>(cinfo.output_height);
    const bool too_big = max_pixels > 0 && int64_t{out.width} * out.height > max_pixels;
    if (!too_big && out.width > 0 && out.height > 0) {
      std::vector<uint8_t> samples(static_cast<size_t>(out.width) * out.height * cinfo.output_components);
      ok = read_pixels(&cinfo, &err, samples.data());
      if (ok && cinfo.out_color_space == JCS_CMYK) samples = cmyk_to_bgr(samples, samples.size() / 4);
      out.channels = cinfo.out_color_space == JCS_GRAYSCALE ? 1 : 3;
      if (ok) out.pixels = std::move(samples);
    }
  }
  jpeg_destroy_decompress(&cinfo);
  out.truncated = err.truncated;
  if (!ok) out.error = err.message;
  return out;
}

}  // namespace torchfit::data::jpeg
