#pragma once
// A temporary directory removed at scope exit, and a generator of tiny class-folder image sets.
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

#include <torchfit/data/image.h>

namespace torchfit::testing {

/// A fresh directory under the system temp dir, removed with everything in it at scope exit.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag = "test") {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("torchfit_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path.string(); }
  /// Path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path / name).string(); }
};

/// Writes `per_class` gray size×size PNGs per class under root/<class>/NNN.png: class k has a bright
/// band in column block k (easy to learn), plus noise.
inline void write_image_classes(const std::filesystem::path& root, const std::vector<std::string>& classes,
                                int per_class, int size, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> noise(0, 60);
  for (size_t k = 0; k < classes.size(); ++k) {
    std::filesystem::create_directories(root / classes[k]);
    for (int i = 0; i < per_class; ++i) {
      data::Image img;
      img.height = img.width = size;
      img.channels = 1;
      img.pixels.resize(static_cast<size_t>(size * size));
      const int band = size / static_cast<int>(classes.size());
      for (int y = 0; y < size; ++y) {
        for (int x = 0; x < size; ++x) {
          const bool on = x / std::max(band, 1) == static_cast<int>(k);
          img.pixels[static_cast<size_t>(y * size + x)] = static_cast<uint8_t>(noise(rng) + (on ? 180 : 0));
        }
      }
      char name[32];
      std::snprintf(name, sizeof name, "%03d.png", i);
      data::save_png((root / classes[k] / name).string(), img);
    }
  }
}

}  // namespace torchfit::testing
