// Tests of image_dataset_from_directory (image_dataset.h) and NumPy's legacy shuffle (numpy_random.h)
// against an independent reference: tests/data/reference/image_dataset_reference.py, written from Keras 3's
// keras/src/utils/{image_dataset_utils,dataset_utils}.py (os.walk, RandomState(seed).shuffle, the split)
// with TensorFlow's resize in NumPy and Pillow's decoding, run with /usr/bin/python3 — on a generated
// folder and, when scripts/prepare_data.sh has written it, on the real Fashion-MNIST data/train.
#include <gtest/gtest.h>

#include <torchfit/data/image_dataset.h>
#include <torchfit/data/numpy_random.h>
#include <torchfit/error.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/training/trainer.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "support/python_reference.h"
#include "support/temp_dir.h"

namespace image_dataset_test {

namespace fs = std::filesystem;
using namespace torchfit::data;
using nlohmann::json;
using torchfit::testing::run_python;
using torchfit::testing::TempDir;

const std::string kScript = std::string(TORCHFIT_SOURCE_DIR) + "/tests/data/reference/image_dataset_reference.py";

torchfit::testing::PythonResult reference(const json& input) {
  return run_python({"numpy", "PIL"}, "exec(open(" + json(kScript).dump() + ").read())", input);
}

// The generated folder (the reference script's make_tree), made once per test.
struct Tree {
  TempDir dir{"image_dataset"};
  std::string root = (dir.path / "tree").string();
  std::string skip;
  Tree() {
    auto r = reference({{"directory", dir.str()},
                        {"make_tree", root},
                        {"labels", nullptr},
                        {"shuffle", false},
                        {"seed", 0},
                        {"image_size", {1, 1}}});
    if (!r.skip.empty()) skip = r.skip;
    if (!r.error.empty()) skip = "ERROR " + r.error;
  }
};

#define REQUIRE_TREE(tree)                                                      \
  do {                                                                          \
    ASSERT_EQ((tree).skip.rfind("ERROR", 0), std::string::npos) << (tree).skip; \
    if (!(tree).skip.empty()) GTEST_SKIP() << (tree).skip;                      \
  } while (0)

// The reference's input for `o` over `dir` (the arguments both sides read).
json input_of(const std::string& dir, const ImageDatasetOptions& o) {
  json in = {{"directory", dir},
             {"shuffle", o.shuffle()},
             {"seed", o.seed() ? json(*o.seed()) : json(nullptr)},
             {"image_size", {o.image_size()[0], o.image_size()[1]}},
             {"interpolation", o.interpolation()},
             {"crop_to_aspect_ratio", o.crop_to_aspect_ratio()},
             {"color_mode", o.color_mode()},
             {"tf_resize_dir", std::string(TORCHFIT_SOURCE_DIR) + "/tests/layers/reference"}};
  in["labels"] = o.labels() == "inferred" ? json("inferred")
                 : o.labels() == "none"   ? json(nullptr)
                                          : json(o.label_list());
  in["class_names"] = o.class_names().empty() ? json(nullptr) : json(o.class_names());
  if (o.validation_split() != 0) in["validation_split"] = o.validation_split(), in["subset"] = o.subset();
  return in;
}

void expect_same_index(const ImageDataset& ds, const json& ref) {
  EXPECT_EQ(ds.file_paths(), ref["file_paths"].get<std::vector<std::string>>());
  if (ref["labels"].is_null()) {
    EXPECT_TRUE(ds.labels().empty());
  } else {
    EXPECT_EQ(ds.labels(), ref["labels"].get<std::vector<int64_t>>());
  }
  if (ref["class_names"].is_null()) {
    EXPECT_TRUE(ds.class_names().empty());
  } else {
    EXPECT_EQ(ds.class_names(), ref["class_names"].get<std::vector<std::string>>());
  }
}

ImageDatasetOptions ids_options() { return ImageDatasetOptions().verbose(false).workers(2).image_size({6, 5}); }

// The whole first pass of an unshuffled dataset as one batch: x (N, C, H, W).
at::Tensor all_images(ImageDataset& ds) { return ds.make_batch(0, 0).x; }

// Max |x − ref| over the first files, x (N, C, H, W) against the reference's (H, W, C) lists.
double max_pixel_error(const at::Tensor& x, const json& pixels) {
  double worst = 0;
  const int64_t c = x.size(1), h = x.size(2), w = x.size(3);
  for (size_t n = 0; n < pixels.size(); ++n) {
    const at::Tensor hwc = x[static_cast<int64_t>(n)].permute({1, 2, 0}).contiguous().to(at::kDouble);
    const double* p = hwc.data_ptr<double>();
    EXPECT_EQ(pixels[n].size(), static_cast<size_t>(h * w * c));
    for (size_t i = 0; i < pixels[n].size(); ++i) worst = std::max(worst, std::abs(p[i] - pixels[n][i].get<double>()));
  }
  return worst;
}

template <typename E, typename F>
void expect_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning: " << needle;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// NumPy's RandomState(seed).shuffle and its masked-rejection draws, 32- and 64-bit, for several seeds.
TEST(NumpyRandomState, ShuffleAndBoundedDrawsEqualNumPys) {
  const std::vector<int64_t> seeds = {0, 1, 42, 1337, 999999, 4294967295LL};
  const std::vector<int64_t> sizes = {0, 1, 2, 3, 10, 1000, 70001};
  const std::vector<uint64_t> maxima = {1, 5, 255, 2147483648ull, 4294967295ull, 8589934599ull};
  auto r = run_python({"numpy"}, R"(
import numpy as np
out = {"shuffles": [], "draws": []}
for s in data["seeds"]:
    for n in data["sizes"]:
        x = list(range(n)); np.random.RandomState(s).shuffle(x); out["shuffles"].append(x)
    rs = np.random.RandomState(s)
    out["draws"].append([[int(v) for v in rs.randint(0, m + 1, size=20, dtype=np.uint64)] for m in data["maxima"]])
)",
                      {{"seeds", seeds}, {"sizes", sizes}, {"maxima", maxima}});
  TORCHFIT_REQUIRE_PYTHON(r);
  size_t k = 0;
  for (size_t s = 0; s < seeds.size(); ++s) {
    for (int64_t n : sizes)
      EXPECT_EQ(numpy_shuffle_order(n, seeds[s]), r.out["shuffles"][k++].get<std::vector<int64_t>>())
          << "seed " << seeds[s] << " n " << n;
    NumpyRandomState rs(seeds[s]);
    for (size_t m = 0; m < maxima.size(); ++m) {
      std::vector<uint64_t> got;
      for (int i = 0; i < 20; ++i) got.push_back(rs.random_interval(maxima[m]));
      EXPECT_EQ(got, r.out["draws"][s][m].get<std::vector<uint64_t>>()) << "seed " << seeds[s] << " max " << maxima[m];
    }
  }
  expect_error<torchfit::ConfigError>([] { NumpyRandomState(-1); }, "got -1");
  expect_error<torchfit::ConfigError>([] { NumpyRandomState(4294967296LL); }, "got 4294967296");
}

// File order, labels and class names as Keras's index_directory + shuffle + split, for every labels kind.
TEST(ImageDatasetFromDirectory, FileListEqualsKeras3s) {
  Tree tree;
  REQUIRE_TREE(tree);
  std::vector<ImageDatasetOptions> cases = {
      ids_options().seed(1337),
      ids_options().shuffle(false),
      ids_options().seed(7).class_names({"dogs", "cats"}),
      ids_options().seed(42).labels("none"),
      ids_options().seed(42).label_mode("none"),
      ids_options().seed(1337).validation_split(0.25).subset("training"),
      ids_options().seed(1337).validation_split(0.25).subset("validation"),
      ids_options().shuffle(false).validation_split(0.3).subset("validation"),
      ids_options().seed(5).label_mode("categorical"),
  };
  // An explicit label list: one per file in walk order (the reference counts the files).
  auto unshuffled = reference(input_of(tree.root, ids_options().shuffle(false).labels("none")));
  TORCHFIT_REQUIRE_PYTHON(unshuffled);
  std::vector<int64_t> list;
  for (size_t i = 0; i < unshuffled.out["file_paths"].size(); ++i) list.push_back(static_cast<int64_t>(i * 7 % 4));
  cases.push_back(ids_options().seed(3).labels(list));
  for (const auto& o : cases) {
    auto r = reference(input_of(tree.root, o.label_mode() == "none" ? ImageDatasetOptions(o).labels("none") : o));
    TORCHFIT_REQUIRE_PYTHON(r);
    auto ds = image_dataset_from_directory(tree.root, o);
    SCOPED_TRACE(input_of(tree.root, o).dump());
    expect_same_index(*ds, r.out);
  }
  // subset "both": the two sides of one index.
  auto both = image_dataset_from_directory_both(tree.root, ids_options().seed(11).validation_split(0.4).subset("both"));
  auto rt = reference(input_of(tree.root, ids_options().seed(11).validation_split(0.4).subset("training")));
  auto rv = reference(input_of(tree.root, ids_options().seed(11).validation_split(0.4).subset("validation")));
  TORCHFIT_REQUIRE_PYTHON(rt);
  TORCHFIT_REQUIRE_PYTHON(rv);
  expect_same_index(*both.first, rt.out);
  expect_same_index(*both.second, rv.out);
  EXPECT_EQ(both.second->stream_config().at("shuffle"), "false");
}

// Keras's messages, and a seed drawn in [0, 10^6) when none is given (the list is then that seed's).
TEST(ImageDatasetFromDirectory, PrintsKerasMessagesAndDrawsASeed) {
  Tree tree;
  REQUIRE_TREE(tree);
  ::testing::internal::CaptureStdout();
  auto ds = image_dataset_from_directory(
      tree.root, ImageDatasetOptions().seed(1).validation_split(0.25).subset("validation").workers(1));
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed, "Found 20 files belonging to 4 classes.\nUsing 5 files for validation.\n");
  ::testing::internal::CaptureStdout();
  image_dataset_from_directory(tree.root, ImageDatasetOptions().labels("none").workers(1));
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "Found 22 files.\n");  // top.png and .git/ too
  auto drawn = image_dataset_from_directory(tree.root, ids_options());
  EXPECT_GE(drawn->seed(), 0);
  EXPECT_LT(drawn->seed(), 1000000);
  auto r = reference(input_of(tree.root, ids_options().seed(drawn->seed())));
  TORCHFIT_REQUIRE_PYTHON(r);
  expect_same_index(*drawn, r.out);
}

// Pixels: TensorFlow's resize by every method (the names in any case, as Keras lower-cases them),
// crop_to_aspect_ratio, grayscale and rgba, within 1e-4.
TEST(ImageDatasetFromDirectory, PixelsEqualTensorFlowsResize) {
  Tree tree;
  REQUIRE_TREE(tree);
  const std::vector<ImageDatasetOptions> cases = {
      ids_options().shuffle(false).batch_size(64),
      ids_options().shuffle(false).batch_size(64).interpolation("nearest"),
      ids_options().shuffle(false).batch_size(64).image_size({9, 13}).interpolation("Bilinear"),
      ids_options().shuffle(false).batch_size(64).crop_to_aspect_ratio(true).image_size({4, 7}),
      ids_options().shuffle(false).batch_size(64).crop_to_aspect_ratio(true).interpolation("nearest"),
      ids_options().shuffle(false).batch_size(64).color_mode("grayscale"),
      ids_options().shuffle(false).batch_size(64).color_mode("rgba").image_size({3, 3}),
      ids_options().shuffle(false).batch_size(64).interpolation("bicubic").image_size({9, 13}),
      ids_options().shuffle(false).batch_size(64).interpolation("AREA"),
      ids_options().shuffle(false).batch_size(64).interpolation("lanczos3").crop_to_aspect_ratio(true),
      ids_options().shuffle(false).batch_size(64).interpolation("lanczos5").image_size({1, 7}),
      ids_options().shuffle(false).batch_size(64).interpolation("gaussian").color_mode("grayscale"),
      ids_options().shuffle(false).batch_size(64).interpolation("mitchellcubic").image_size({11, 4}),
  };
  for (const auto& o : cases) {
    json in = input_of(tree.root, o);
    std::string lower = o.interpolation();
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    in["interpolation"] = lower;
    in["pixels"] = 64;
    auto r = reference(in);
    TORCHFIT_REQUIRE_PYTHON(r);
    auto ds = image_dataset_from_directory(tree.root, o);
    SCOPED_TRACE(in.dump());
    const at::Tensor x = all_images(*ds);
    ASSERT_EQ(x.size(0), static_cast<int64_t>(r.out["pixels"].size()));
    EXPECT_EQ(x.size(1), o.color_mode() == "rgb" ? 3 : o.color_mode() == "rgba" ? 4 : 1);
    EXPECT_EQ(x.size(2), o.image_size()[0]);
    EXPECT_EQ(x.size(3), o.image_size()[1]);
    const double err = max_pixel_error(x, r.out["pixels"]);
    std::cout << "max |x - reference| " << err << " for " << in.dump() << "\n";
    EXPECT_LE(err, 1e-4);
  }
}

// batch_size std::nullopt (Keras's None): one sample per next(), without the batch axis — the same pixels and
// labels, in the same order, as the unshuffled batched dataset; a pass is one sample per "batch".
TEST(ImageDatasetFromDirectory, UnbatchedYieldsSamplesWithoutTheBatchAxis) {
  Tree tree;
  REQUIRE_TREE(tree);
  const auto o = ids_options().shuffle(false).label_mode("categorical").interpolation("bicubic");
  auto batched = image_dataset_from_directory(tree.root, ImageDatasetOptions(o).batch_size(64));
  auto single = image_dataset_from_directory(tree.root, ImageDatasetOptions(o).batch_size(std::nullopt));
  EXPECT_TRUE(single->unbatched());
  EXPECT_FALSE(batched->unbatched());
  EXPECT_EQ(single->batch_size(), 1);
  EXPECT_EQ(single->batches_per_pass(), single->samples());
  EXPECT_EQ(single->stream_config().at("batch_size"), "none");
  const Batch all = batched->make_batch(0, 0);
  for (int64_t i = 0; i < single->samples(); ++i) {
    const Batch b = single->next();
    ASSERT_EQ(b.x.sizes(), (std::vector<int64_t>{3, 6, 5}));
    ASSERT_EQ(b.y.sizes(), (std::vector<int64_t>{4}));
    EXPECT_TRUE(at::equal(b.x, all.x[i]));
    EXPECT_TRUE(at::equal(b.y, all.y[i]));
  }
  auto ints =
      image_dataset_from_directory(tree.root, ImageDatasetOptions(o).label_mode("int").batch_size(std::nullopt));
  EXPECT_EQ(ints->next().y.dim(), 0);
  // fit, evaluate and predict take batches: an unbatched source is refused by name, as Keras's fit needs one.
  torchfit::Sequential m;
  m->add(torchfit::Flatten(torchfit::FlattenOptions().input_shape(torchfit::Shape{6, 5, 3})));
  m->add(torchfit::Dense(torchfit::DenseOptions(4).activation("softmax")));
  torchfit::Trainer t(m, torchfit::CompileOptions());
  single->reset();
  expect_error<torchfit::ConfigError>([&] { t.fit(*single, torchfit::FitOptions().epochs(1).verbose(0)); },
                                      "fit: the data source is unbatched (batch_size None)");
  expect_error<torchfit::ConfigError>([&] { t.evaluate(*single); }, "evaluate: the data source is unbatched");
  expect_error<torchfit::ConfigError>([&] { t.predict(*single); }, "predict: the data source is unbatched");
  EXPECT_NO_THROW(t.evaluate(*batched));
}

// Labels: int64 class indices, one-hot float32, binary float32 (N, 1), none; a batch follows the pass order.
TEST(ImageDatasetFromDirectory, LabelModes) {
  Tree tree;
  REQUIRE_TREE(tree);
  auto ints = image_dataset_from_directory(tree.root, ids_options().seed(9).batch_size(6));
  const Batch b = ints->next();
  ASSERT_EQ(b.y.scalar_type(), at::kLong);
  ASSERT_EQ(b.size(), 6);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(b.y[i].item<int64_t>(), ints->labels()[static_cast<size_t>(b.indices[i])]);
  auto cat =
      image_dataset_from_directory(tree.root, ids_options().shuffle(false).batch_size(20).label_mode("categorical"));
  const Batch c = cat->next();
  ASSERT_EQ(c.y.scalar_type(), at::kFloat);
  ASSERT_EQ(c.y.sizes(), (std::vector<int64_t>{20, 4}));
  for (int64_t i = 0; i < 20; ++i)
    for (int64_t k = 0; k < 4; ++k)
      EXPECT_EQ(c.y[i][k].item<float>(), cat->labels()[static_cast<size_t>(c.indices[i])] == k ? 1.0f : 0.0f);
  auto bin = image_dataset_from_directory(
      tree.root, ids_options().shuffle(false).batch_size(16).label_mode("binary").class_names({"dogs", "Birds"}));
  const Batch d = bin->next();
  ASSERT_EQ(d.y.sizes(), (std::vector<int64_t>{10, 1}));
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(d.y[i][0].item<float>(), i < 7 ? 0.0f : 1.0f);  // dogs first
  auto none = image_dataset_from_directory(tree.root, ids_options().seed(2).label_mode("none"));
  EXPECT_FALSE(none->next().y.defined());
}

// Every pass visits each file once; shuffled passes differ and keep a seed's order; validation does not shuffle.
TEST(ImageDatasetFromDirectory, PassOrders) {
  for (int64_t n : {0, 1, 5, 100}) {
    auto o = buffered_shuffle_order(n, 8, 3, 1);
    std::sort(o.begin(), o.end());
    EXPECT_EQ(o, pass_order(n, false, 0, 0));
  }
  EXPECT_EQ(buffered_shuffle_order(100, 8, 3, 1), buffered_shuffle_order(100, 8, 3, 1));
  EXPECT_NE(buffered_shuffle_order(100, 8, 3, 1), buffered_shuffle_order(100, 8, 3, 2));
  // A buffer of 8 moves a file at most 7 places earlier: the first output is one of the first 8.
  for (int64_t p = 0; p < 20; ++p) EXPECT_LT(buffered_shuffle_order(100, 8, 3, p)[0], 8);
  EXPECT_EQ(buffered_shuffle_order(5, 1, 3, 0), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

// Trainer::fit trains from the dataset (the BatchIterator contract), with a validation dataset.
TEST(ImageDatasetFromDirectory, FitTrainsFromIt) {
  Tree tree;
  REQUIRE_TREE(tree);
  auto [train, val] = image_dataset_from_directory_both(
      tree.root,
      ids_options().seed(4).batch_size(4).image_size({4, 4}).validation_split(0.25).subset("both").label_mode(
          "categorical"));
  torchfit::Sequential model;
  model->add(torchfit::Flatten(torchfit::FlattenOptions().input_shape(torchfit::Shape{4, 4, 3})));
  model->add(torchfit::Dense(torchfit::DenseOptions(4).activation("softmax")));
  torchfit::Trainer t(model, torchfit::CompileOptions());
  auto h = t.fit(*train, torchfit::FitOptions().epochs(2).validation_data(val.get()).verbose(0));
  EXPECT_EQ(h.history.at("loss").size(), 2u);
  EXPECT_EQ(h.history.at("val_loss").size(), 2u);
  EXPECT_TRUE(std::isfinite(h.history.at("loss").back()));
}

// Bad input: each a clear error naming the value.
TEST(ImageDatasetFromDirectory, BadInputIsAClearError) {
  Tree tree;
  REQUIRE_TREE(tree);
  const std::string& root = tree.root;
  using torchfit::ConfigError;
  using torchfit::IoError;
  expect_error<IoError>([&] { image_dataset_from_directory(root + "/missing", ids_options()); }, root + "/missing");
  fs::create_directories(tree.dir.path / "no_images" / "a");
  fs::create_directories(tree.dir.path / "no_images" / "b");
  const std::string empty = (tree.dir.path / "no_images").string();
  expect_error<IoError>([&] { image_dataset_from_directory(empty, ids_options()); },
                        "No images found in directory " + empty);
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, ids_options().label_mode("sparse")); },
                            "\"sparse\"");
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, ids_options().color_mode("bgr")); }, "bgr");
  expect_error<ConfigError>(
      [&] { image_dataset_from_directory(root, ids_options().seed(1).validation_split(0.2).subset("train")); },
      "\"train\"");
  expect_error<ConfigError>(
      [&] { image_dataset_from_directory(root, ids_options().seed(1).validation_split(1.5).subset("training")); },
      "got 1.5");
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, ids_options().seed(1).validation_split(0.2)); },
                            "validation_split 0.2");
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, ids_options().seed(1).subset("training")); },
                            "subset \"training\"");
  expect_error<ConfigError>(
      [&] { image_dataset_from_directory(root, ids_options().validation_split(0.2).subset("training")); },
      "needs a seed");
  expect_error<ConfigError>(
      [&] { image_dataset_from_directory(root, ids_options().seed(1).validation_split(0.01).subset("training")); },
      "validation_split 0.01 of 20 files gives 0");
  expect_error<ConfigError>(
      [&] {
        image_dataset_from_directory(root, ids_options().labels(std::vector<int64_t>{0, 1, 0}));
      },
      "labels has 3 entries, but the number of files found in " + root + " is 22");
  std::vector<int64_t> sparse_labels(22, 0);
  sparse_labels[5] = 9;  // two distinct labels {0, 9}: one-hot of depth 2 has no place for 9
  expect_error<ConfigError>(
      [&] { image_dataset_from_directory(root, ids_options().labels(sparse_labels).label_mode("categorical")); },
      "label 9 is outside 0..1");
  EXPECT_NO_THROW(image_dataset_from_directory(root, ids_options().labels(sparse_labels)));  // int: the value itself
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, ids_options().label_mode("binary")); },
                            "label_mode \"binary\" needs exactly 2 classes, got 4");
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, ids_options().interpolation("cubic")); },
                            "interpolation must be one of bilinear, nearest, bicubic, area, lanczos3, lanczos5, "
                            "gaussian, mitchellcubic, got \"cubic\"");
  expect_error<ConfigError>(
      [&] {
        image_dataset_from_directory(root, ids_options().class_names({"cats", "cows"}));
      },
      "\"cows\" is not one of");
  expect_error<ConfigError>(
      [&] { image_dataset_from_directory(root, ids_options().labels("none").class_names({"cats"})); }, "class_names");
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, ids_options().seed(-5)); }, "got -5");
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, ids_options().batch_size(0)); },
                            "batch_size must be >= 1 (or std::nullopt: unbatched, Keras's None), got 0");
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, ids_options().image_size({0, 4})); }, "(0, 4)");
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, ids_options().labels("auto")); }, "\"auto\"");
  expect_error<ConfigError>(
      [&] { image_dataset_from_directory(root, ids_options().seed(1).validation_split(0.2).subset("both")); },
      "image_dataset_from_directory_both");
}

// The real Fashion-MNIST folder (scripts/prepare_data.sh): Keras's list, split and pixels.
TEST(ImageDatasetFromDirectory, FashionMnistFolderEqualsKeras3s) {
  const std::string root = std::string(TORCHFIT_SOURCE_DIR) + "/data/train";
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " is absent (scripts/prepare_data.sh writes it)";
  const auto o = ImageDatasetOptions()
                     .verbose(false)
                     .seed(123)
                     .validation_split(0.2)
                     .subset("validation")
                     .image_size({40, 33})
                     .batch_size(8)
                     .label_mode("categorical");
  auto ds = image_dataset_from_directory(root, o);
  const Batch b = ds->make_batch(0, 0);
  json in = input_of(root, o);
  in["pixel_indices"] = b.indices;  // the batch's files (pass 0 is shuffled within its buffer)
  auto r = reference(in);
  TORCHFIT_REQUIRE_PYTHON(r);
  expect_same_index(*ds, r.out);
  EXPECT_EQ(ds->samples(), 12000);
  EXPECT_LE(max_pixel_error(b.x, r.out["pixels"]), 1e-4);
  auto dn = image_dataset_from_directory(root, ImageDatasetOptions(o).interpolation("nearest"));
  const Batch bn = dn->make_batch(0, 1);
  json near = in;
  near["interpolation"] = "nearest";
  near["pixel_indices"] = bn.indices;
  auto rn = reference(near);
  TORCHFIT_REQUIRE_PYTHON(rn);
  EXPECT_LE(max_pixel_error(bn.x, rn.out["pixels"]), 1e-4);
  for (int64_t i = 0; i < b.size(); ++i)  // categorical labels of the batch's files
    EXPECT_EQ(b.y[i].argmax().item<int64_t>(), r.out["labels"][static_cast<size_t>(b.indices[i])].get<int64_t>());
}

// The real Fashion-MNIST folder resized 28 → (40, 33) (up) and → (9, 20) (down, non-integer) by bicubic and
// area, and by bilinear and nearest downwards: within 1e-4 of the reference (0..255 values).
TEST(ImageDatasetFromDirectory, FashionMnistEveryMethodEqualsTensorFlowsResize) {
  const std::string root = std::string(TORCHFIT_SOURCE_DIR) + "/data/train";
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " is absent (scripts/prepare_data.sh writes it)";
  for (const std::string method : {"bicubic", "area", "bilinear", "nearest"}) {
    for (const Size2 size : {Size2{40, 33}, Size2{9, 20}}) {
      if ((method == "bilinear" || method == "nearest") && size[0] == 40) continue;  // the test above
      const auto o = ImageDatasetOptions()
                         .verbose(false)
                         .seed(7)
                         .validation_split(0.2)
                         .subset("validation")
                         .image_size(size)
                         .batch_size(6)
                         .interpolation(method)
                         .label_mode("int");
      auto ds = image_dataset_from_directory(root, o);
      const Batch b = ds->make_batch(0, 2);
      json in = input_of(root, o);
      in["pixel_indices"] = b.indices;
      auto r = reference(in);
      TORCHFIT_REQUIRE_PYTHON(r);
      SCOPED_TRACE(method + " " + std::to_string(size[0]) + "x" + std::to_string(size[1]));
      const double err = max_pixel_error(b.x, r.out["pixels"]);
      std::cout << "Fashion-MNIST " << method << " " << size[0] << "x" << size[1] << ": max |x - reference| " << err
                << "\n";
      EXPECT_LE(err, 1e-4);
    }
  }
}

}  // namespace image_dataset_test
