// libFuzzer target: the image header check + decode + resize path that every file of a user's folder
// goes through (data/image.h). Built and run by scripts/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
// Contract under test: any bytes give either "" + a decoded image, or a reason / an IoError — never a
// crash, hang or out-of-bounds access.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include <torchfit/data/image.h>
#include <torchfit/error.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/torchfit_fuzz_" + std::to_string(::getpid()) + ".img";
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  const std::string reason = torchfit::data::check_image_file(path);
  try {
    auto img = torchfit::data::decode_image(data, size, torchfit::data::ColorMode::rgb, "fuzz input");
    if (img.height > 0 && img.width > 0 && img.height * static_cast<int64_t>(img.width) < (1 << 22)) {
      torchfit::data::resize_image(img, 7, 5, "bilinear");
      torchfit::data::resize_image(img, 9, 3, "nearest");
    }
    auto gray = torchfit::data::decode_image(data, size, torchfit::data::ColorMode::grayscale, "fuzz input");
    (void)gray;
  } catch (const torchfit::IoError&) {
    // a clear error is the expected outcome for bad bytes
  }
  (void)reason;
  return 0;
}
