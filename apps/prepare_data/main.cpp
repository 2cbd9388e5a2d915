// prepare_data — lays out Debian's Fashion-MNIST (IDX files) as the seeds' image folders:
//   <out>/train/<class>/NNNNN.png, <out>/test/<class>/NNNNN.png, <out>/pred/NNNNN.png, <out>/pred_labels.csv
// Idempotent: every planned file is encoded in memory and compared with what is on disk; only
// missing or different files are written and stale PNGs in these folders are removed.
// Subcommand `bench` measures the DirectoryIterator's images/s (scripts/bench_data.sh).
#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/idx.h>
#include <torchfit/data/image.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>
#include <torchfit/runtime/process.h>

#include <CLI/CLI.hpp>

#include "../common/cli.h"
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

namespace fs = std::filesystem;
using namespace torchfit::data;

namespace {

const std::vector<std::string> kClassNames = {"T-shirt_top", "Trouser", "Pullover", "Dress", "Coat",
                                              "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle_boot"};

struct Planned {
  fs::path path;
  const uint8_t* pixels;  // 28×28 gray
};

struct Split {
  IdxArray images, labels;
};

Split read_split(const fs::path& source, const std::string& prefix) {
  Split s;
  s.images = read_idx_file((source / (prefix + "-images-idx3-ubyte.gz")).string());
  s.labels = read_idx_file((source / (prefix + "-labels-idx1-ubyte.gz")).string());
  if (s.images.dims.size() != 3 || s.labels.dims.size() != 1 || s.images.dims[0] != s.labels.dims[0])
    throw torchfit::IoError("unexpected IDX shapes for " + prefix + " in " + source.string());
  return s;
}

std::string five(int64_t i) {
  char b[16];
  std::snprintf(b, sizeof b, "%05lld", static_cast<long long>(i));
  return b;
}

bool same_bytes(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec || size != bytes.size()) return false;
  std::ifstream f(p, std::ios::binary);
  std::vector<uint8_t> have(bytes.size());
  f.read(reinterpret_cast<char*>(have.data()), static_cast<std::streamsize>(have.size()));
  return f && have == bytes;
}

void write_atomically(const fs::path& p, const std::vector<uint8_t>& bytes) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw torchfit::IoError("cannot write " + tmp.string());
  }
  fs::rename(tmp, p);
}

int prepare(const std::string& source, const std::string& output, int64_t per_class, int64_t num_classes,
            int64_t pred_count, int64_t threads, bool full_verify) {
  const auto t0 = std::chrono::steady_clock::now();
  if (num_classes < 1 || num_classes > 10) throw torchfit::ConfigError("--classes must be 1..10, got " + std::to_string(num_classes));
  if (per_class < 0) throw torchfit::ConfigError("--images-per-class must be >= 0 (0 = all), got " + std::to_string(per_class));
  if (pred_count < 0) throw torchfit::ConfigError("--pred-count must be >= 0, got " + std::to_string(pred_count));
  if (std::filesystem::exists(output) && !std::filesystem::is_directory(output)) {
    throw torchfit::ConfigError("--output: '" + output + "' exists and is not a directory");
  }
  const Split train = read_split(source, "train"), test = read_split(source, "t10k");
  const int64_t h = train.images.dims[1], w = train.images.dims[2];
  const fs::path out(output);

  std::vector<Planned> plan;
  std::vector<int64_t> count_train(10, 0), count_test(10, 0);
  auto pixels = [&](const Split& s, int64_t i) { return s.images.data.data() + i * h * w; };
  for (int64_t i = 0; i < train.labels.dims[0]; ++i) {
    const int c = train.labels.data[static_cast<size_t>(i)];
    if (c >= num_classes || (per_class > 0 && count_train[c] >= per_class)) continue;
    ++count_train[c];
    plan.push_back({out / "train" / kClassNames[c] / (five(i) + ".png"), pixels(train, i)});
  }
  // pred/: pred_count test images of the chosen classes, evenly spaced, not kept in test/.
  std::vector<int64_t> candidates;
  for (int64_t i = 0; i < test.labels.dims[0]; ++i)
    if (test.labels.data[static_cast<size_t>(i)] < num_classes) candidates.push_back(i);
  pred_count = std::min<int64_t>(pred_count, static_cast<int64_t>(candidates.size()));
  std::set<int64_t> pred;
  for (int64_t k = 0; k < pred_count; ++k)
    pred.insert(candidates[static_cast<size_t>(k * static_cast<int64_t>(candidates.size()) / pred_count)]);
  std::string csv = "filename,class_index,class_name\n";
  for (int64_t i : pred) {
    const int c = test.labels.data[static_cast<size_t>(i)];
    plan.push_back({out / "pred" / (five(i) + ".png"), pixels(test, i)});
    csv += five(i) + ".png," + std::to_string(c) + "," + kClassNames[c] + "\n";
  }
  for (int64_t i : candidates) {
    if (pred.count(i)) continue;
    const int c = test.labels.data[static_cast<size_t>(i)];
    if (per_class > 0 && count_test[c] >= per_class) continue;
    ++count_test[c];
    plan.push_back({out / "test" / kClassNames[c] / (five(i) + ".png"), pixels(test, i)});
  }

  int64_t ntrain = 0, ntest = 0;
  for (int c = 0; c < 10; ++c) ntrain += count_train[c], ntest += count_test[c];
  auto summary = [&] {
    std::printf("Fashion-MNIST from %s -> %s: %lld classes, train %lld, test %lld, pred %lld (labels in %s)\n",
                source.c_str(), output.c_str(), static_cast<long long>(num_classes), static_cast<long long>(ntrain),
                static_cast<long long>(ntest), static_cast<long long>(pred.size()), (out / "pred_labels.csv").string().c_str());
  };

  // Stamp of a finished run. When it matches and the folders hold exactly the planned files
  // (names and non-zero sizes), the run is up to date; --verify compares every byte instead.
  const fs::path stamp_path = out / ".prepare_data.stamp";
  const std::string stamp = "source=" + source + " images_per_class=" + std::to_string(per_class) +
                            " classes=" + std::to_string(num_classes) + " pred_count=" + std::to_string(pred_count) +
                            " files=" + std::to_string(plan.size()) + "\n";
  std::set<std::string> planned_paths;
  for (const auto& p : plan) planned_paths.insert(p.path.string());
  std::vector<fs::path> folders = {out / "pred"};
  for (int c = 0; c < 10; ++c) folders.push_back(out / "train" / kClassNames[c]), folders.push_back(out / "test" / kClassNames[c]);
  if (!full_verify && same_bytes(stamp_path, std::vector<uint8_t>(stamp.begin(), stamp.end())) &&
      same_bytes(out / "pred_labels.csv", std::vector<uint8_t>(csv.begin(), csv.end()))) {
    size_t found = 0;
    bool ok = true;
    for (const auto& f : folders) {
      std::error_code ec;
      if (!fs::is_directory(f, ec)) continue;
      for (const auto& e : fs::directory_iterator(f)) {
        if (e.path().extension() != ".png") continue;
        std::error_code ec2;
        if (!planned_paths.count(e.path().string()) || e.file_size(ec2) == 0 || ec2) ok = false;
        ++found;
      }
    }
    if (ok && found == plan.size()) {
      summary();
      std::printf("up to date: %zu files present (checked names and sizes in %.1f s; --verify compares every byte)\n", found,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      return 0;
    }
  }
  std::error_code stamp_ec;
  fs::remove(stamp_path, stamp_ec);

  // Folders, then stale PNGs (ours only: train/<class>, test/<class>, pred).
  int64_t removed = 0;
  for (const auto& f : folders) {
    std::error_code ec;
    if (fs::is_directory(f, ec))
      for (const auto& e : fs::directory_iterator(f))
        if (e.path().extension() == ".png" && !planned_paths.count(e.path().string())) fs::remove(e.path()), ++removed;
    const bool wanted = f.filename() == "pred" ||
                        std::find(kClassNames.begin(), kClassNames.begin() + num_classes, f.filename().string()) !=
                            kClassNames.begin() + num_classes;
    if (wanted) fs::create_directories(f);
    else if (fs::is_directory(f, ec) && fs::is_empty(f, ec)) fs::remove(f);
  }

  std::atomic<size_t> next{0};
  std::atomic<int64_t> written{0}, verified{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < plan.size();) {
      Image img{static_cast<int>(h), static_cast<int>(w), 1,
                std::vector<uint8_t>(plan[i].pixels, plan[i].pixels + h * w)};
      const std::vector<uint8_t> png = encode_png(img);
      if (same_bytes(plan[i].path, png)) {
        ++verified;
      } else {
        write_atomically(plan[i].path, png);
        ++written;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  const fs::path csv_path = out / "pred_labels.csv";
  const std::vector<uint8_t> csv_bytes(csv.begin(), csv.end());
  if (!same_bytes(csv_path, csv_bytes)) write_atomically(csv_path, csv_bytes);

  write_atomically(stamp_path, std::vector<uint8_t>(stamp.begin(), stamp.end()));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  summary();
  std::printf("%lld files already up to date, %lld written, %lld stale removed in %.1f s\n",
              static_cast<long long>(verified.load()), static_cast<long long>(written.load()),
              static_cast<long long>(removed), s);
  return 0;
}

int bench(const std::string& dir, int64_t workers, int64_t batches, int64_t size, int64_t batch_size, bool augment) {
  ImageDataGeneratorOptions o = ImageDataGeneratorOptions().rescale(1.0 / 255);
  if (augment) o.shear_range(0.2).zoom_range(0.2).rotation_range(20).horizontal_flip(true);
  auto it = ImageDataGenerator(o).flow_from_directory(
      dir, FlowOptions().target_size({size, size}).batch_size(batch_size).workers(workers).seed(1).verbose(false));
  for (int i = 0; i < 2; ++i) it->next();  // warm-up: threads started, queue primed
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();  // process CPU time, all threads
  int64_t images = 0;
  double wait = 0;
  for (int64_t i = 0; i < batches; ++i) {
    const Batch b = it->next();
    images += b.size();
    wait += b.wait_ms;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf("torchfit DirectoryIterator workers=%lld images=%lld seconds=%.3f images_per_s=%.1f cpu_seconds=%.3f "
              "images_per_cpu_s=%.1f wait_ms_per_batch=%.2f augment=%d size=%lld batch=%lld\n",
              static_cast<long long>(workers), static_cast<long long>(images), s, images / s, cpu, images / cpu,
              wait / static_cast<double>(batches), augment ? 1 : 0, static_cast<long long>(size),
              static_cast<long long>(batch_size));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"prepare_data: Debian's Fashion-MNIST as train/<class>/, test/<class>/ and pred/ PNG folders"};
  std::string source = "/usr/share/datasets/fashion-mnist", output = "data";
  int64_t per_class = 0, classes = 10, pred_count = 500;
  int64_t threads = std::max<unsigned>(1, std::thread::hardware_concurrency());
  app.add_option("--source", source, "folder with the *-idx?-ubyte.gz files (package dataset-fashion-mnist)")
      ->capture_default_str();
  app.add_option("-o,--output", output, "output folder")->capture_default_str();
  app.add_option("--images-per-class", per_class, "images per class in train/ and in test/ (0 = all)")->capture_default_str();
  app.add_option("--classes", classes, "use the first K classes (1..10)")->capture_default_str();
  app.add_option("--pred-count", pred_count, "test images moved to pred/ (unlabelled)")->capture_default_str();
  app.add_option("--threads", threads, "encoding threads")->capture_default_str();
  bool full_verify = false;
  app.add_flag("--verify", full_verify, "re-encode every image and compare it byte for byte with the file on disk");

  auto* b = app.add_subcommand("bench", "images/s of DirectoryIterator with the seeds' augmentation");
  std::string bench_dir = "data/train";
  int64_t workers = 1, batches = 100, size = 150, batch_size = 32;
  bool no_augment = false;
  b->add_option("--dir", bench_dir, "image folder (class sub-folders)")->capture_default_str();
  b->add_option("--workers", workers, "worker threads (0 = all cores)")
      ->capture_default_str()
      ->check(torchfit::apps::int_range(0, torchfit::data::kMaxWorkers));
  b->add_option("--batches", batches, "timed batches (after 2 warm-up batches)")
      ->capture_default_str()
      ->check(torchfit::apps::int_range(1));
  b->add_option("--target-size", size, "square target size")->capture_default_str()->check(CLI::Range(1, 4096));
  b->add_option("--batch-size", batch_size, "batch size")->capture_default_str()->check(torchfit::apps::int_range(1));
  b->add_flag("--no-augment", no_augment, "rescale only");
  TORCHFIT_CLI_PARSE(app, argc, argv);
  try {
    torchfit::runtime::init_process();  // as every app: keep freed memory (batch tensors) in the process
    if (*b) return bench(bench_dir, workers, batches, size, batch_size, !no_augment);
    return prepare(source, output, per_class, classes, pred_count, threads, full_verify);
  } catch (const torchfit::ConfigError& e) {  // a bad flag value
    spdlog::error("{}", e.what());
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
