// Inputs found by or written for scripts/fuzz.sh (tests/data/fuzz_regressions/): decoding each must give
// a clear IoError — never a crash or an empty image (the cheap header check may let a file with a valid
// frame but corrupt pixel data through; decoding is the backstop).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <torchfit/data/image.h>
#include <torchfit/error.h>

using namespace torchfit;

TEST(FuzzRegressions, EveryInputIsRejectedCleanly) {
  const std::filesystem::path dir = std::filesystem::path(TORCHFIT_SOURCE_DIR) / "tests/data/fuzz_regressions";
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
    const std::string path = e.path().string();
    if (e.path().filename().string().find("garbage") == std::string::npos) {
      EXPECT_NE(data::check_image_file(path), "") << path << " passed the header check";
    }
    std::ifstream f(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_THROW(data::decode_image(bytes.data(), bytes.size(), data::ColorMode::rgb, path), IoError) << path;
  }
  EXPECT_GE(files, 4);
}
