// prepare_data — lays out Debian's Fashion-MNIST (IDX files) as the seeds' image folders:
//   <out>/train/<class>/NNNNN.png, <out>/test/<class>/NNNNN.png, <out>/pred/NNNNN.png, <out>/pred_labels.csv
// Idempotent: every planned file is encoded in memory and compared with what is on disk; only
// missing or different files are written and stale PNGs in these folders are removed.
// Subcommand `bench` measures the images/s of the DirectoryIterator (scripts/bench_data.sh) or, with
// --loader image_dataset, of image_dataset_from_directory's ImageDataset.
#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/idx.h>
#include <torchfit/data/image.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/data/image_dataset.h>
#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/io/csv.h>
#include <torchfit/runtime/process.h>

#include <CLI/CLI.hpp>

#include <torchfit/runtime/logging.h>
#include "../common/cli.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <thread>
#include <utility>

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

void write_file(const fs::path& p, const std::vector<uint8_t>& bytes, bool durable) {
  torchfit::io::write_text_atomically(p.string(), std::string(bytes.begin(), bytes.end()), durable);
}

struct Options {
  std::string source = "/usr/share/datasets/fashion-mnist", output = "data";
  int64_t per_class = 0, classes = 10, pred_count = 500;
  int64_t threads = std::max<unsigned>(1, std::thread::hardware_concurrency());
  bool full_verify = false;
};

// Which image goes where: train/<class>/, pred/ (evenly spaced test images) and test/<class>/.
struct Plan {
  std::vector<Planned> files;
  std::string csv = torchfit::io::csv_line({"filename", "class_index", "class_name"});  // pred_labels.csv
  int64_t ntrain = 0, ntest = 0, npred = 0;
  std::vector<fs::path> folders;  // every folder prepare_data owns (all ten classes)
  std::set<std::string> paths;
};

const uint8_t* pixels(const Split& s, int64_t i) {
  return s.images.data.data() + i * s.images.dims[1] * s.images.dims[2];
}

void plan_train(Plan& plan, const Split& train, const fs::path& out, const Options& o) {
  std::vector<int64_t> count(10, 0);
  for (int64_t i = 0; i < train.labels.dims[0]; ++i) {
    const int c = train.labels.data[static_cast<size_t>(i)];
    if (c >= o.classes || (o.per_class > 0 && count[c] >= o.per_class)) continue;
    ++count[c];
    ++plan.ntrain;
    plan.files.push_back({out / "train" / kClassNames[c] / (five(i) + ".png"), pixels(train, i)});
  }
}

// pred/: pred_count test images of the chosen classes, evenly spaced, not kept in test/.
void plan_pred_and_test(Plan& plan, const Split& test, const fs::path& out, const Options& o) {
  std::vector<int64_t> candidates;
  for (int64_t i = 0; i < test.labels.dims[0]; ++i)
    if (test.labels.data[static_cast<size_t>(i)] < o.classes) candidates.push_back(i);
  const int64_t n = std::min<int64_t>(o.pred_count, static_cast<int64_t>(candidates.size()));
  std::set<int64_t> pred;
  for (int64_t k = 0; k < n; ++k)
    pred.insert(candidates[static_cast<size_t>(k * static_cast<int64_t>(candidates.size()) / n)]);
  for (int64_t i : pred) {
    const int c = test.labels.data[static_cast<size_t>(i)];
    plan.files.push_back({out / "pred" / (five(i) + ".png"), pixels(test, i)});
    plan.csv += torchfit::io::csv_line({five(i) + ".png", std::to_string(c), kClassNames[c]});
  }
  plan.npred = static_cast<int64_t>(pred.size());
  std::vector<int64_t> count(10, 0);
  for (int64_t i : candidates) {
    const int c = test.labels.data[static_cast<size_t>(i)];
    if (pred.count(i) || (o.per_class > 0 && count[c] >= o.per_class)) continue;
    ++count[c];
    ++plan.ntest;
    plan.files.push_back({out / "test" / kClassNames[c] / (five(i) + ".png"), pixels(test, i)});
  }
}

Plan make_plan(const Split& train, const Split& test, const Options& o) {
  const fs::path out(o.output);
  Plan plan;
  plan_train(plan, train, out, o);
  plan_pred_and_test(plan, test, out, o);
  for (const auto& p : plan.files) plan.paths.insert(p.path.string());
  plan.folders = {out / "pred"};
  for (int c = 0; c < 10; ++c)
    plan.folders.push_back(out / "train" / kClassNames[c]), plan.folders.push_back(out / "test" / kClassNames[c]);
  return plan;
}

// The stamp of a finished run: the settings and the number of files.
std::string stamp_text(const Options& o, const Plan& plan) {
  return "source=" + o.source + " images_per_class=" + std::to_string(o.per_class) +
         " classes=" + std::to_string(o.classes) + " pred_count=" + std::to_string(o.pred_count) +
         " files=" + std::to_string(plan.files.size()) + "\n";
}

// Every file passes the loader's header check (check_image_file: the decoder's header parser, so a
// zeroed or foreign file is found), on `threads` threads.
bool headers_pass(const std::vector<std::string>& files, int64_t threads) {
  std::atomic<size_t> next{0};
  std::atomic<bool> ok{true};
  auto work = [&] {
    for (size_t i; ok && (i = next.fetch_add(1)) < files.size();) {
      const std::string why = check_image_file(files[i]);
      if (!why.empty()) {
        torchfit::logger().info("{} fails the header check ({}); rewriting", files[i], why);
        ok = false;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return ok;
}

// Up to date: the stamp and pred_labels.csv match and the folders hold exactly the planned files
// (names), each passing the loader's header check; --verify compares every byte instead.
bool up_to_date(const Plan& plan, const std::string& stamp, const fs::path& out, int64_t threads) {
  if (!same_bytes(out / ".prepare_data.stamp", std::vector<uint8_t>(stamp.begin(), stamp.end())) ||
      !same_bytes(out / "pred_labels.csv", std::vector<uint8_t>(plan.csv.begin(), plan.csv.end()))) {
    return false;
  }
  std::vector<std::string> found;
  for (const auto& f : plan.folders) {
    std::error_code ec;
    if (!fs::is_directory(f, ec)) continue;
    for (const auto& e : fs::directory_iterator(f)) {
      if (e.path().extension() != ".png") continue;
      if (!plan.paths.count(e.path().string())) return false;
      found.push_back(e.path().string());
    }
  }
  return found.size() == plan.files.size() && headers_pass(found, threads);
}

// Folders of the chosen classes made; stale PNGs (ours only: train/<class>, test/<class>, pred) removed.
int64_t remove_stale(const Plan& plan, int64_t classes) {
  int64_t removed = 0;
  for (const auto& f : plan.folders) {
    std::error_code ec;
    if (fs::is_directory(f, ec))
      for (const auto& e : fs::directory_iterator(f))
        if (e.path().extension() == ".png" && !plan.paths.count(e.path().string())) fs::remove(e.path()), ++removed;
    const auto last = kClassNames.begin() + classes;
    const bool wanted = f.filename() == "pred" || std::find(kClassNames.begin(), last, f.filename().string()) != last;
    if (wanted)
      fs::create_directories(f);
    else if (fs::is_directory(f, ec) && fs::is_empty(f, ec))
      fs::remove(f);
  }
  return removed;
}

// Encodes every planned PNG on `threads` threads; writes those that differ from the disk.
std::pair<int64_t, int64_t> write_files(const Plan& plan, int64_t threads, int64_t h, int64_t w) {
  std::atomic<size_t> next{0};
  std::atomic<int64_t> written{0}, verified{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < plan.files.size();) {
      const auto& p = plan.files[i];
      Image img{static_cast<int>(h), static_cast<int>(w), 1, std::vector<uint8_t>(p.pixels, p.pixels + h * w)};
      const std::vector<uint8_t> png = encode_png(img);
      if (same_bytes(p.path, png)) {
        ++verified;
      } else {
        write_file(p.path, png, /*durable=*/false);  // one sync_filesystem before the stamp
        ++written;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return {verified.load(), written.load()};
}

int prepare(const Options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const Split train = read_split(o.source, "train"), test = read_split(o.source, "t10k");
  const Plan plan = make_plan(train, test, o);
  const fs::path out(o.output);
  std::printf("Fashion-MNIST from %s -> %s: %lld classes, train %lld, test %lld, pred %lld (labels in %s)\n",
              o.source.c_str(), o.output.c_str(), static_cast<long long>(o.classes),
              static_cast<long long>(plan.ntrain), static_cast<long long>(plan.ntest),
              static_cast<long long>(plan.npred), (out / "pred_labels.csv").string().c_str());
  const std::string stamp = stamp_text(o, plan);
  if (!o.full_verify && up_to_date(plan, stamp, out, o.threads)) {
    std::printf(
        "up to date: %zu files present (checked names and image headers in %.1f s; --verify compares every "
        "byte)\n",
        plan.files.size(), seconds());
    return 0;
  }
  std::error_code stamp_ec;
  fs::remove(out / ".prepare_data.stamp", stamp_ec);
  const int64_t removed = remove_stale(plan, o.classes);
  const auto [verified, written] = write_files(plan, o.threads, train.images.dims[1], train.images.dims[2]);
  const std::vector<uint8_t> csv_bytes(plan.csv.begin(), plan.csv.end());
  if (!same_bytes(out / "pred_labels.csv", csv_bytes)) write_file(out / "pred_labels.csv", csv_bytes, false);
  torchfit::io::sync_filesystem(out.string());
  write_file(out / ".prepare_data.stamp", std::vector<uint8_t>(stamp.begin(), stamp.end()), true);
  std::printf("%lld files already up to date, %lld written, %lld stale removed in %.1f s\n",
              static_cast<long long>(verified), static_cast<long long>(written), static_cast<long long>(removed),
              seconds());
  return 0;
}

struct BenchOptions {
  std::string dir = "data/train";
  std::string loader = "generator";
  int64_t workers = 1, batches = 100, size = 150, batch_size = 32;
  int64_t max_image_pixels = kMaxImagePixels;
  bool no_augment = false;
  bool cache = false;
  int64_t cache_max_mib = 4096;
};

// The source `bench` times: flow_from_directory (the seeds' augmentation unless --no-augment) or
// image_dataset_from_directory (bilinear, no augmentation), seed 1; `cache_of` reports its cache then.
struct BenchSource {
  std::unique_ptr<BatchIterator> it;
  std::function<std::pair<int64_t, int64_t>()> cache_of;  // cached samples, bytes
  std::string name;
};

BenchSource bench_source(const BenchOptions& b) {
  if (b.loader == "image_dataset") {
    auto ds = image_dataset_from_directory(b.dir, ImageDatasetOptions()
                                                      .image_size({b.size, b.size})
                                                      .batch_size(b.batch_size)
                                                      .workers(b.workers)
                                                      .max_image_pixels(b.max_image_pixels)
                                                      .seed(1)
                                                      .cache(b.cache)
                                                      .cache_max_bytes(b.cache_max_mib << 20)
                                                      .verbose(false));
    ImageDataset* p = ds.get();
    return {std::move(ds), [p] { return std::make_pair(p->cached_samples(), p->cache_bytes()); }, "ImageDataset"};
  }
  const ImageDataGeneratorOptions o =
      b.no_augment ? ImageDataGeneratorOptions().rescale(1.0 / 255) : article_augmentation();
  auto it = ImageDataGenerator(o).flow_from_directory(b.dir, FlowOptions()
                                                                 .target_size({b.size, b.size})
                                                                 .batch_size(b.batch_size)
                                                                 .workers(b.workers)
                                                                 .max_image_pixels(b.max_image_pixels)
                                                                 .seed(1)
                                                                 .cache(b.cache)
                                                                 .cache_max_bytes(b.cache_max_mib << 20)
                                                                 .verbose(false));
  DirectoryIterator* p = it.get();
  return {std::move(it), [p] { return std::make_pair(p->cached_samples(), p->cache_bytes()); }, "DirectoryIterator"};
}

int bench(const BenchOptions& b) {
  const int64_t workers = b.workers, batches = b.batches, size = b.size, batch_size = b.batch_size;
  const bool augment = !b.no_augment && b.loader == "generator";
  BenchSource source = bench_source(b);
  BatchIterator& it = *source.it;
  // Warm-up: threads started, queue primed; with --cache the whole first pass, which fills the cache,
  // so that the timed batches are those of the second pass (epoch 2).
  const int64_t warmup = b.cache ? it.batches_per_pass() : 2;
  const auto f0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < warmup; ++i) it.next();
  const double fill_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();  // process CPU time, all threads
  int64_t images = 0;
  double wait = 0;
  for (int64_t i = 0; i < batches; ++i) {
    const Batch batch = it.next();
    images += batch.size();
    wait += batch.wait_ms;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf(
      "torchfit %s workers=%lld images=%lld seconds=%.3f images_per_s=%.1f cpu_seconds=%.3f "
      "images_per_cpu_s=%.1f wait_ms_per_batch=%.2f augment=%d size=%lld batch=%lld cache=%d",
      source.name.c_str(), static_cast<long long>(workers), static_cast<long long>(images), s, images / s, cpu,
      images / cpu, wait / static_cast<double>(batches), augment ? 1 : 0, static_cast<long long>(size),
      static_cast<long long>(batch_size), b.cache ? 1 : 0);
  if (b.cache) {  // the first pass (it fills the cache) and the cache's size after it
    const auto [cached, bytes] = source.cache_of();
    std::printf(" pass1_images_per_s=%.1f cached_samples=%lld cache_mib=%.1f",
                static_cast<double>(it.samples()) / fill_s, static_cast<long long>(cached),
                static_cast<double>(bytes) / (1 << 20));
  }
  std::printf("\n");
  return 0;
}

void add_prepare_flags(CLI::App& app, Options& o) {
  using torchfit::apps::int_range;
  app.add_option("--source", o.source, "folder with the *-idx?-ubyte.gz files (package dataset-fashion-mnist)")
      ->capture_default_str()
      ->check(torchfit::apps::existing_directory());
  app.add_option("-o,--output", o.output, "output folder")
      ->capture_default_str()
      ->check(torchfit::apps::output_directory());
  app.add_option("--images-per-class", o.per_class, "images per class in train/ and in test/ (0 = all)")
      ->capture_default_str()
      ->check(int_range(0));
  app.add_option("--classes", o.classes, "use the first K classes (1..10)")
      ->capture_default_str()
      ->check(int_range(1, 10));
  app.add_option("--pred-count", o.pred_count, "test images moved to pred/ (unlabelled)")
      ->capture_default_str()
      ->check(int_range(0));
  app.add_option("--threads", o.threads, "encoding threads")
      ->capture_default_str()
      ->check(int_range(1, torchfit::apps::limits::kMaxThreads));
  app.add_flag("--verify", o.full_verify, "re-encode every image and compare it byte for byte with the file on disk");
}

void add_bench_flags(CLI::App& b, BenchOptions& o) {
  using namespace torchfit::apps;
  b.add_option("--dir", o.dir, "image folder (class sub-folders)")->capture_default_str()->check(existing_directory());
  b.add_option(
       "--loader", o.loader,
       "generator (flow_from_directory, the seeds' augmentation) | image_dataset (image_dataset_from_directory: "
       "bilinear, no augmentation)")
      ->capture_default_str()
      ->check(CLI::IsMember({"generator", "image_dataset"}));
  b.add_option("--workers", o.workers, "worker threads (0 = all cores)")
      ->capture_default_str()
      ->check(int_range(0, limits::kMaxWorkers));
  b.add_option("--batches", o.batches, "timed batches (after 2 warm-up batches)")
      ->capture_default_str()
      ->check(int_range(1));
  b.add_option("--target-size", o.size, "square target size")
      ->capture_default_str()
      ->check(int_range(1, limits::kMaxTargetSize));
  add_batch_size_flag(b, o.batch_size, "batch size");
  add_max_image_pixels_flag(b, o.max_image_pixels);
  b.add_flag("--no-augment", o.no_augment, "rescale only (--loader generator)");
  b.add_flag("--cache", o.cache, "decoded-image cache: the first pass fills it (untimed), the timed batches follow");
  b.add_option("--cache-max-mib", o.cache_max_mib, "budget of --cache, MiB")
      ->capture_default_str()
      ->check(int_range(1, int64_t{1} << 30));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"prepare_data: Debian's Fashion-MNIST as train/<class>/, test/<class>/ and pred/ PNG folders"};
  Options o;
  add_prepare_flags(app, o);
  BenchOptions bo;
  auto* b = app.add_subcommand(
      "bench", "images/s of DirectoryIterator with the seeds' augmentation, or of image_dataset_from_directory");
  add_bench_flags(*b, bo);
  TORCHFIT_CLI_PARSE(app, argc, argv);
  return torchfit::apps::run_reporting_errors("prepare_data", [&] {
    torchfit::runtime::init_process();  // as every app: keep freed memory (batch tensors) in the process
    if (*b) return bench(bo);
    return prepare(o);
  });
}
