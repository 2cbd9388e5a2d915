#pragma once
// Image-folder fixtures for the tests: class folders of small PNGs as flow_from_directory reads them
// (root/<class>/<file>.png), plus the pieces to build odd trees by hand.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <torchfit/data/image.h>

namespace torchfit::testing {

/// An h×w RGB image whose pixels encode (seed, row, col), so every file differs:
/// value(y, x, c) = (37·seed + 11·y + 5·x + 70·c) mod 256.
inline data::Image pattern(int h, int w, int seed) {
  data::Image img{h, w, 3, std::vector<uint8_t>(static_cast<size_t>(h * w * 3))};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        img.pixels[static_cast<size_t>((y * w + x) * 3 + c)] =
            static_cast<uint8_t>((seed * 37 + y * 11 + x * 5 + c * 70) % 256);
  return img;
}

/// Writes `bytes` to `path` as they are (for damaged or disguised files), creating the folders.
inline void write_bytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

/// Saves `img` as a PNG at `path`, creating the folders.
inline void write_png(const std::filesystem::path& path, const data::Image& img) {
  std::filesystem::create_directories(path.parent_path());
  data::save_png(path.string(), img);
}

/// `n` RGB PNGs of size×size per class under root/<class>/00.png, 01.png, …: file k of the whole tree
/// (classes in the given order, files in name order) is pattern(size, size, k).
inline void make_tree(const std::filesystem::path& root, const std::vector<std::string>& classes, int n, int size = 8) {
  int k = 0;
  for (const auto& c : classes)
    for (int i = 0; i < n; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "%02d.png", i);
      write_png(root / c / name, pattern(size, size, k++));
    }
}

/// `per_class` gray size×size PNGs per class under root/<class>/000.png, 001.png, …: class k has a
/// bright band (+180) in column block k of width size / classes.size(), plus noise U{0..60} from
/// std::mt19937(seed) — a problem a small model learns in a few epochs.
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
