// onnx_classify — class probabilities for a folder of images from a torchfit model exported to ONNX,
// with OpenCV DNN alone (no torchfit, no LibTorch): the deployment side of docs/deployment.md.
//
//   convert_model runs/r1/model.ckpt model.onnx          (on the training machine)
//   onnx_classify model.onnx ./images [--rescale 0.00392156862745098] [--output predictions.csv]
//
// Preprocessing is what torchfit's training and predict_cnn do (Keras's load_img + rescale): decode the file
// without EXIF rotation, RGB order (grayscale: PIL's luma, L = (19595 R + 38470 G + 7471 B + 2^15) >> 16),
// resize to the model's (H, W) with PIL's nearest neighbour (its own table: OpenCV's INTER_NEAREST_EXACT differs on
// ties) when the size differs, pixel values × rescale (default 1/255), as a float32 (N, C, H, W) blob. Writes
// file,class,probability and one probability column per class (predict_cnn's columns).
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "onnx_info.h"

namespace fs = std::filesystem;

namespace {

struct Args {
  std::string model, folder, output = "predictions.csv";
  double rescale = 1.0 / 255;
};

int usage() {
  std::cerr << "usage: onnx_classify MODEL.onnx IMAGE_FOLDER [--rescale R] [--output predictions.csv]\n";
  return 2;
}

bool parse(int argc, char** argv, Args& a) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--rescale" || arg == "--output") && i + 1 < argc) {
      if (arg == "--rescale") a.rescale = std::stod(argv[++i]);
      if (arg == "--output") a.output = argv[++i];
    } else if (arg.rfind("--", 0) == 0) {
      return false;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) return false;
  a.model = positional[0];
  a.folder = positional[1];
  return true;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Images of the folder (not its sub-folders), sorted by name as predict_cnn lists them.
std::vector<fs::path> image_files(const std::string& folder) {
  static const std::vector<std::string> exts = {".png", ".jpg",  ".jpeg", ".bmp", ".gif",
                                                ".tif", ".tiff", ".webp", ".ppm", ".pgm"};
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(folder)) {
    std::string ext = e.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (e.is_regular_file() && std::find(exts.begin(), exts.end(), ext) != exts.end()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  return files;
}

// PIL's NEAREST, which Keras's load_img uses: source (int)(step/2 + k·step), the position accumulated in double,
// step = in/out. OpenCV's INTER_NEAREST_EXACT picks the next pixel on exact ties (28 → 150: row 37).
std::vector<int> pil_nearest(int in, int out) {
  std::vector<int> t(static_cast<size_t>(out));
  const double step = static_cast<double>(in) / out;
  double pos = step * 0.5;
  for (int k = 0; k < out; ++k, pos += step) t[static_cast<size_t>(k)] = std::min(in - 1, static_cast<int>(pos));
  return t;
}

cv::Mat resize_nearest_as_pil(const cv::Mat& img, int height, int width) {
  const std::vector<int> rows = pil_nearest(img.rows, height), cols = pil_nearest(img.cols, width);
  cv::Mat out(height, width, img.type());
  const size_t pixel = img.elemSize();
  for (int y = 0; y < height; ++y) {
    const uchar* src = img.ptr(rows[static_cast<size_t>(y)]);
    uchar* dst = out.ptr(y);
    for (int x = 0; x < width; ++x) std::memcpy(dst + x * pixel, src + cols[static_cast<size_t>(x)] * pixel, pixel);
  }
  return out;
}

// One image as the model's (H, W, C) 8-bit input: RGB (or PIL's grayscale), resized like Keras's load_img.
cv::Mat load_image(const fs::path& file, int height, int width, int channels) {
  cv::Mat bgr = cv::imread(file.string(), cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION);
  if (bgr.empty()) throw std::runtime_error("cannot decode " + file.string());
  cv::Mat img;
  if (channels == 1) {
    img.create(bgr.size(), CV_8UC1);
    bgr.forEach<cv::Vec3b>([&](const cv::Vec3b& p, const int* pos) {
      img.at<uchar>(pos[0], pos[1]) = static_cast<uchar>((19595 * p[2] + 38470 * p[1] + 7471 * p[0] + 0x8000) >> 16);
    });
  } else {
    cv::cvtColor(bgr, img, cv::COLOR_BGR2RGB);
  }
  if (img.rows != height || img.cols != width) img = resize_nearest_as_pil(img, height, width);
  return img;
}

// The CSV header; classes named by index ("0", "1", …) when the model has no class names, as predict_cnn.
void write_header(std::ofstream& out, std::vector<std::string>& names, int classes) {
  if (static_cast<int>(names.size()) != classes) {
    names.clear();
    for (int j = 0; j < classes; ++j) names.push_back(std::to_string(j));
  }
  out << "file,class,probability";
  for (const auto& name : names) out << "," << name;
  out << "\n";
}

void write_row(std::ofstream& out, const std::string& file, const cv::Mat& probs, int row,
               const std::vector<std::string>& names) {
  const float* p = probs.ptr<float>(row);
  const int k = probs.size[1];
  const int best = static_cast<int>(std::max_element(p, p + k) - p);
  out << file << "," << names[best];
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", p[best]);
  out << "," << buf;
  for (int j = 0; j < k; ++j) {
    std::snprintf(buf, sizeof buf, "%.9g", p[j]);
    out << "," << buf;
  }
  out << "\n";
}

int run(const Args& a) {
  const std::string bytes = read_file(a.model);
  const OnnxInfo info = read_onnx_info(bytes);
  if (info.input_dims.size() != 4) throw std::runtime_error(a.model + " does not take images (N, C, H, W)");
  const int c = static_cast<int>(info.input_dims[1]), h = static_cast<int>(info.input_dims[2]),
            w = static_cast<int>(info.input_dims[3]);
  cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
  std::ofstream out(a.output);
  std::vector<std::string> names = info.class_names;
  const auto files = image_files(a.folder);
  const size_t batch = 32;
  for (size_t start = 0; start < files.size(); start += batch) {
    std::vector<cv::Mat> images;
    for (size_t i = start; i < std::min(files.size(), start + batch); ++i)
      images.push_back(load_image(files[i], h, w, c));
    // (N, C, H, W) float32, pixel × rescale; the images are RGB already (swapRB false), no resize, no crop.
    net.setInput(cv::dnn::blobFromImages(images, a.rescale, cv::Size(), cv::Scalar(), false, false, CV_32F));
    const cv::Mat probs = net.forward();
    if (start == 0) write_header(out, names, probs.size[1]);
    for (size_t i = 0; i < images.size(); ++i)
      write_row(out, files[start + i].filename().string(), probs, static_cast<int>(i), names);
  }
  if (!out) throw std::runtime_error("cannot write " + a.output);
  std::cout << "onnx_classify: " << files.size() << " images → " << a.output << " (OpenCV " << CV_VERSION << ", input '"
            << info.input_name << "' " << c << "x" << h << "x" << w << ")\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, a)) return usage();
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::cerr << "onnx_classify: " << e.what() << "\n";
    return 1;
  }
}
